import { randomBytes } from 'node:crypto';
import { hashToken, SCOPES, TOKEN_PREFIX, type Scope, type TokenRecord } from '../domain/token.js';
import type { Store } from '../store/store.js';

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
