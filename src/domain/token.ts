import { createHash } from 'node:crypto';

export const SCOPES = ['plants:read', 'plants:write', 'metrics:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** Managed tokens start with this, so a leaked one is easy to recognise (and to redact). */
export const TOKEN_PREFIX = 'pst_';

export interface TokenRecord {
  id: string;
  name: string;
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  hash: string;
  /** The first characters of the token, so a person can tell tokens apart. */
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** RFC 6750 b64token: what may follow `Bearer `. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function isWellFormedToken(token: string, maxLength = 512): boolean {
  return token.length <= maxLength && B64TOKEN.test(token);
}

export function isActive(record: TokenRecord, now = new Date()): boolean {
  return record.revokedAt === null && (record.expiresAt === null || record.expiresAt > now);
}

const UNITS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 };

/** `30d`, `12h`, `90m`, `3600s`, `2w` → milliseconds; undefined when not of that form. */
export function parseDuration(text: string): number | undefined {
  const m = /^([1-9][0-9]{0,8})([smhdw])$/.exec(text);
  return m ? Number(m[1]) * UNITS[m[2] as string]! : undefined;
}
