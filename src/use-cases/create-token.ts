import { randomBytes } from 'node:crypto';
import { InvalidInputError } from '../domain/errors.js';
import { hashToken, SCOPES, TOKEN_PREFIX, type Scope, type TokenRecord } from '../domain/token.js';
import { tokenProblem } from '../domain/token-rules.js';
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

/**
 * Stores a token's hash and returns the token itself: the only time it is ever seen. The record
 * must keep the rules of every stored token (domain/token-rules.ts), which a restore applies too.
 */
export async function createToken(
  { tokens }: Pick<Store, 'tokens'>,
  spec: NewToken,
  now = new Date(),
): Promise<{ token: string; record: TokenRecord }> {
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
    expiresAt: spec.expiresAt ?? null,
    revokedAt: null,
  };
  const problem = tokenProblem(record);
  if (problem !== undefined) throw new InvalidInputError(`a token's "${problem.field}" ${problem.problem}`);
  await tokens.insert(record);
  return { token, record };
}
