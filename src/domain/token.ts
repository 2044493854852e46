import { hash } from 'node:crypto';

export const SCOPES = ['plants:read', 'plants:write', 'metrics:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** Managed tokens start with this, so a leaked one is easy to recognise (and to redact). */
export const TOKEN_PREFIX = 'pst_';

export interface TokenRecord {
  id: string;
  name: string;
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  hash: string;
  /**
   * `pst_` and the next 4 characters of a managed (generated) token, so a person can tell tokens
   * apart: 4 of its 43 random characters, too few to matter. Empty for a token whose value the
   * operator chose (PLANT_STORE_TOKEN): no part of such a secret is kept.
   */
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** RFC 6750 b64token: what may follow `Bearer `. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

// Every request hashes its token: the one-shot hash() costs less than half of a Hash object's
// create, update and digest.
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

export function isWellFormedToken(token: string, maxLength = 512): boolean {
  return token.length <= maxLength && B64TOKEN.test(token);
}

export function isActive(record: TokenRecord, now = new Date()): boolean {
  return record.revokedAt === null && (record.expiresAt === null || record.expiresAt > now);
}

/** The prefix a managed token keeps: `pst_` and 4 characters. */
export const MANAGED_PREFIX = /^pst_[A-Za-z0-9_-]{4}$/;

/** What a listing may show of a stored prefix: only the managed form. */
export function shownPrefix(prefix: string): string | null {
  return MANAGED_PREFIX.test(prefix) ? prefix : null;
}

const UNITS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 };

/** The longest lifetime a token can be given: 10 years of 365 days (3650d, 521w, 87600h). */
export const MAX_TOKEN_LIFETIME_MS = 3650 * UNITS.d!;

/**
 * `30d`, `12h`, `90m`, `3600s`, `2w` → milliseconds; undefined when not of that form. The
 * result can exceed MAX_TOKEN_LIFETIME_MS: the caller refuses it, saying so.
 */
export function parseDuration(text: string): number | undefined {
  const m = /^([1-9][0-9]{0,8})([smhdw])$/.exec(text);
  return m ? Number(m[1]) * UNITS[m[2] as string]! : undefined;
}
