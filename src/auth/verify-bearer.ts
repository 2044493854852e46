import { ForbiddenError, UnauthenticatedError, UnavailableError } from '../domain/errors.js';
import { hashToken, isActive, isWellFormedToken, TOKEN_PREFIX } from '../domain/token.js';
import { JwtRejected, looksLikeJwt, type VerifyJwt } from './jwt.js';
import type { FindTicket, FindToken } from './token-cache.js';

/** JWTs signed with RSA keys run to a kilobyte or more; managed tokens are far shorter. */
const MAX_JWT_LENGTH = 8192;

/** Who a request speaks for: a managed token, or an identity provider's access token. */
export interface Principal {
  kind: 'token' | 'jwt';
  /** The managed token's id, or the JWT's `sub`: what the log shows (never the token itself). */
  id: string | undefined;
  scopes: readonly string[];
  /**
   * What the per-token rate limit counts against, the same on every instance that shares limits:
   * `token:<hash>` for a managed token, `jwt:<sub>` for a JWT (its Redis key's last part).
   */
  limitKey: string;
  /**
   * When the credential stops being accepted: a JWT's `exp` with the clock tolerance, a managed
   * token's expiry. What it makes, a stream ticket, ends then too (and says so in its expiresAt).
   */
  acceptedUntil?: Date | undefined;
}

/** How bearer tokens are checked: managed tokens always; JWTs when JWT mode is on. */
export interface Verifiers {
  findToken: FindToken;
  /** Stream tickets, by hash (`?ticket=` on the changes stream: verify-ticket.ts). */
  findTicket: FindTicket;
  verifyJwt?: VerifyJwt | undefined;
  /** A token's hash (token-cache.ts remembers them); SHA-256 each time when absent. */
  hashOf?: (token: string) => string;
}

/**
 * The credential of an `Authorization` header, not yet checked. No header, or another scheme
 * than Bearer (case-insensitive), is "no credential".
 */
export function bearerCredential(header: string | undefined): string {
  if (header === undefined || header === '') throw new UnauthenticatedError('a bearer token is required', false);
  const space = header.indexOf(' ');
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') {
    throw new UnauthenticatedError('a bearer token is required (Authorization: Bearer <token>)', false);
  }
  return space === -1 ? '' : header.slice(space + 1).trim();
}

/** The principal a bearer token stands for; a token that is malformed, unknown, revoked or expired is refused. */
export async function verifyBearer(token: string, verifiers: Verifiers): Promise<Principal> {
  if (token === '' || !isWellFormedToken(token, MAX_JWT_LENGTH)) {
    throw new UnauthenticatedError('the bearer token is malformed', true);
  }
  // `pst_` means managed. Anything else shaped like a JWT is one when JWT mode is on; other
  // values (a PLANT_STORE_TOKEN chosen by the operator) are looked up as managed tokens.
  if (verifiers.verifyJwt && !token.startsWith(TOKEN_PREFIX) && looksLikeJwt(token)) {
    try {
      const jwt = await verifiers.verifyJwt(token);
      return {
        kind: 'jwt',
        id: jwt.subject,
        scopes: jwt.scopes,
        limitKey: `jwt:${jwt.subject ?? hashToken(token)}`,
        acceptedUntil: jwt.acceptedUntil,
      };
    } catch (err) {
      if (err instanceof JwtRejected && err.keysUnavailable) {
        throw new UnavailableError('the identity provider keys are unavailable; retry later', 5, { cause: err });
      }
      throw new UnauthenticatedError(err instanceof JwtRejected ? err.message : 'the bearer token is not valid', true);
    }
  }
  if (token.length > 512) throw new UnauthenticatedError('the bearer token is malformed', true);
  const hash = (verifiers.hashOf ?? hashToken)(token);
  const record = await verifiers.findToken(hash);
  if (!record) throw new UnauthenticatedError('the bearer token is not valid', true);
  if (record.revokedAt !== null) throw new UnauthenticatedError('the bearer token has been revoked', true);
  if (!isActive(record)) throw new UnauthenticatedError('the bearer token has expired', true);
  return {
    kind: 'token',
    id: record.id,
    scopes: record.scopes,
    limitKey: `token:${hash}`,
    acceptedUntil: record.expiresAt ?? undefined,
  };
}

/** A managed token's hash, which its limit key (`token:<hash>`) carries; undefined for a JWT. */
export function tokenHashOf(principal: Principal): string | undefined {
  return principal.kind === 'token' ? principal.limitKey.slice('token:'.length) : undefined;
}

export function requireScope(principal: Principal, scope: string | undefined): void {
  if (scope !== undefined && !principal.scopes.includes(scope)) throw new ForbiddenError(scope);
}
