import { createHash, randomBytes } from 'node:crypto';
import { SCOPES, type Scope, type Store, type TokenRecord } from '../store/store.js';

export const TOKEN_PREFIX = 'pst_';
/** RFC 6750 b64token: what may follow `Bearer `. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function isWellFormedToken(token: string, maxLength = 512): boolean {
  return token.length <= maxLength && B64TOKEN.test(token);
}

export interface NewToken {
  name: string;
  scopes?: readonly Scope[];
  expiresAt?: Date | null;
  /** A value chosen by the operator (PLANT_STORE_TOKEN); otherwise one is generated. */
  value?: string;
}

/** Stores a token's hash and returns the token itself: the only time it is ever seen. */
export async function createToken(
  store: Store,
  spec: NewToken,
  now = new Date(),
): Promise<{ token: string; record: TokenRecord }> {
  const token = spec.value ?? TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const record: TokenRecord = {
    id: randomBytes(6).toString('hex'),
    name: spec.name,
    hash: hashToken(token),
    prefix: token.slice(0, TOKEN_PREFIX.length + 4),
    scopes: [...(spec.scopes?.length ? new Set(spec.scopes) : SCOPES)],
    createdAt: now,
    expiresAt: spec.expiresAt ?? null,
    revokedAt: null,
  };
  await store.insertToken(record);
  return { token, record };
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
