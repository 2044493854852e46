import { randomBytes } from 'node:crypto';
import { InvalidInputError } from '../domain/errors.js';
import {
  hashToken,
  MAX_TOKEN_LIFETIME_MS,
  SCOPES,
  TOKEN_PREFIX,
  type Scope,
  type TokenRecord,
} from '../domain/token.js';
import type { Store } from '../store/store.js';

export interface NewToken {
  name: string;
  /** Every scope when undefined; an empty list is refused (it never means "all"). */
  scopes?: readonly Scope[];
  /** A valid date within MAX_TOKEN_LIFETIME_MS of now; null or undefined: never expires. */
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
  if (spec.scopes !== undefined) {
    if (spec.scopes.length === 0) throw new InvalidInputError('a token needs at least one scope');
    const unknown = spec.scopes.find((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown !== undefined)
      throw new InvalidInputError(`unknown scope "${unknown}"; scopes are ${SCOPES.join(', ')}`);
  }
  const expiresAt = spec.expiresAt ?? null;
  if (expiresAt !== null) {
    const ms = expiresAt.getTime();
    if (!Number.isFinite(ms)) throw new InvalidInputError('the expiry is not a valid date');
    if (ms <= now.getTime()) throw new InvalidInputError('the expiry must be in the future');
    if (ms - now.getTime() > MAX_TOKEN_LIFETIME_MS) {
      throw new InvalidInputError('a token can live at most 3650 days (10 years)');
    }
  }
  const token = spec.value ?? TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const record: TokenRecord = {
    id: randomBytes(6).toString('hex'),
    name: spec.name,
    hash: hashToken(token),
    // An operator's own value keeps no part of itself; a managed token shows pst_ + 4 of its 43
    // random characters.
    prefix: spec.value === undefined ? token.slice(0, TOKEN_PREFIX.length + 4) : '',
    scopes: [...new Set(spec.scopes ?? SCOPES)],
    createdAt: now,
    expiresAt,
    revokedAt: null,
  };
  await store.insertToken(record);
  return { token, record };
}
