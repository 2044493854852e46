import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/http-error.js';
import type { RateLimits } from '../http/rate-limit.js';
import type { FindToken } from './token-cache.js';
import { JwtRejected, looksLikeJwt, type VerifyJwt } from './jwt.js';
import { hashToken, isActive, isWellFormedToken, TOKEN_PREFIX } from './tokens.js';

const REALM = 'Bearer realm="plant-store"';
/** JWTs signed with RSA keys run to a kilobyte or more; managed tokens are far shorter. */
const MAX_JWT_LENGTH = 8192;

/** Who a request speaks for: a managed token, or an identity provider's access token. */
export interface Principal {
  kind: 'token' | 'jwt';
  /** The managed token's id, or the JWT's `sub`: what the log shows (never the token itself). */
  id: string | undefined;
  scopes: readonly string[];
  /** What the per-token rate limit counts against: the same on every instance that shares limits. */
  limitKey: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who authenticated this request, if anyone. */
    principal?: Principal;
  }
}

/** What the bearer check needs: managed tokens always; JWT verification and limits when configured. */
export interface AuthDeps {
  findToken: FindToken;
  verifyJwt?: VerifyJwt | undefined;
  limits?: RateLimits | undefined;
}

function unauthorized(message: string, invalidToken: boolean): HttpError {
  return new HttpError(401, message, {
    'www-authenticate': invalidToken ? `${REALM}, error="invalid_token"` : REALM,
  });
}

/** The principal a well-formed bearer token stands for; throws the 401 (or 503) otherwise. */
async function verify(token: string, deps: AuthDeps): Promise<Principal> {
  // `pst_` means managed. Anything else shaped like a JWT is one when JWT mode is on; other
  // values (a PLANT_STORE_TOKEN chosen by the operator) are looked up as managed tokens.
  if (deps.verifyJwt && !token.startsWith(TOKEN_PREFIX) && looksLikeJwt(token)) {
    try {
      const jwt = await deps.verifyJwt(token);
      return { kind: 'jwt', id: jwt.subject, scopes: jwt.scopes, limitKey: `jwt:${jwt.subject ?? hashToken(token)}` };
    } catch (err) {
      if (err instanceof JwtRejected && err.keysUnavailable) {
        throw new HttpError(503, 'the identity provider keys are unavailable; retry later', { 'retry-after': '5' });
      }
      throw unauthorized(err instanceof JwtRejected ? err.message : 'the bearer token is not valid', true);
    }
  }
  if (token.length > 512) throw unauthorized('the bearer token is malformed', true);
  const hash = hashToken(token);
  const record = await deps.findToken(hash);
  if (!record) throw unauthorized('the bearer token is not valid', true);
  if (record.revokedAt !== null) throw unauthorized('the bearer token has been revoked', true);
  if (!isActive(record)) throw unauthorized('the bearer token has expired', true);
  return { kind: 'token', id: record.id, scopes: record.scopes, limitKey: hash };
}

/**
 * An onRequest hook: it runs before the body is read, so a caller without a credential never
 * gets the body parsed and learns nothing about the data or the schema. Order: too many
 * refused credentials from this address (429), credential (401), scope (403), this token's
 * rate limit (429).
 */
export function requireScope(deps: AuthDeps, scope: string | undefined) {
  const { limits } = deps;
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') throw unauthorized('a bearer token is required', false);
    const space = header.indexOf(' ');
    const scheme = space === -1 ? header : header.slice(0, space);
    if (scheme.toLowerCase() !== 'bearer') {
      throw unauthorized('a bearer token is required (Authorization: Bearer <token>)', false);
    }
    limits?.checkAddress(request);
    const token = header.slice(space + 1).trim();
    let principal: Principal;
    try {
      if (space === -1 || !isWellFormedToken(token, MAX_JWT_LENGTH)) {
        throw unauthorized('the bearer token is malformed', true);
      }
      principal = await verify(token, deps);
    } catch (err) {
      if (limits && err instanceof HttpError && err.statusCode === 401) await limits.recordFailure(request);
      throw err;
    }
    request.principal = principal;
    if (scope !== undefined && !principal.scopes.includes(scope)) {
      throw new HttpError(403, `this operation needs the scope ${scope}`, {
        'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"`,
      });
    }
    if (limits) await limits.countToken(request, reply, principal.limitKey);
  };
}
