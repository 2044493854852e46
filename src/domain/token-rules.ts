import { lineProblem, timeProblem, type FieldProblem } from './record-values.js';
import { MANAGED_PREFIX, MAX_TOKEN_LIFETIME_MS, SCOPES, type TokenRecord } from './token.js';

// The rules every stored token keeps. `createToken` checks the record it made against them, and
// a restore checks each token of a backup against them: one set of rules, so a restore accepts
// exactly the tokens `token create` could have made, and every token it makes can be restored.

/** What `createToken` makes a token's id: 6 random bytes in hex. */
const TOKEN_ID = /^[0-9a-f]{12}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The longest name a token can be given (`token create --name`). */
export const MAX_TOKEN_NAME = 200;

/** Why `name` cannot be a token's name (`must …`), or undefined. */
export function tokenNameProblem(name: string): string | undefined {
  return lineProblem(name, MAX_TOKEN_NAME);
}

/** Why these cannot be a token's scopes (`must …`), or undefined: at least one, each known, each once. */
export function scopesProblem(scopes: readonly string[]): string | undefined {
  if (scopes.length === 0) return `must name at least one scope (${SCOPES.join(', ')})`;
  const unknown = scopes.find((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) return `must name scopes among ${SCOPES.join(', ')} (not "${unknown}")`;
  const twice = scopes.find((s, i) => scopes.indexOf(s) !== i);
  if (twice !== undefined) return `must name each scope once (not "${twice}" twice)`;
  return undefined;
}

/** Why `t` is not a token the store may hold, naming the field, or undefined. */
export function tokenProblem(t: TokenRecord): FieldProblem<TokenRecord> | undefined {
  const at = (field: keyof TokenRecord, problem: string | undefined) => (problem ? { field, problem } : undefined);
  return (
    at('id', TOKEN_ID.test(t.id) ? undefined : 'must be 12 lower-case hex digits, as token create makes it') ??
    at('name', tokenNameProblem(t.name)) ??
    at('hash', SHA256_HEX.test(t.hash) ? undefined : 'must be a SHA-256 in lower-case hex') ??
    at(
      'prefix',
      t.prefix === '' || MANAGED_PREFIX.test(t.prefix) ? undefined : 'must be pst_ and 4 characters, or empty',
    ) ??
    at('scopes', scopesProblem(t.scopes)) ??
    at('createdAt', timeProblem(t.createdAt)) ??
    at('expiresAt', t.expiresAt ? expiryProblem(t.createdAt, t.expiresAt) : undefined) ??
    at('revokedAt', t.revokedAt ? timeProblem(t.revokedAt) : undefined)
  );
}

/**
 * A token expires after its creation, and at most 10 years after it. (A revocation is not held to
 * come after the creation: the two are stamped by the clocks of whichever machines ran them.)
 */
function expiryProblem(createdAt: Date, expiresAt: Date): string | undefined {
  const problem = timeProblem(expiresAt);
  if (problem) return problem;
  const lifetime = expiresAt.getTime() - createdAt.getTime();
  if (!(lifetime > 0)) return 'must be later than its creation';
  if (lifetime > MAX_TOKEN_LIFETIME_MS) return 'must be at most 3650 days (10 years) after its creation';
  return undefined;
}
