import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/http-error.js';
import type { TokenRecord } from '../store/store.js';
import type { FindToken } from './token-cache.js';
import { hashToken, isActive, isWellFormedToken } from './tokens.js';

const REALM = 'Bearer realm="plant-store"';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token that authenticated this request, if any. */
    principal?: TokenRecord;
  }
}

function unauthorized(message: string, invalidToken: boolean): HttpError {
  return new HttpError(401, message, {
    'www-authenticate': invalidToken ? `${REALM}, error="invalid_token"` : REALM,
  });
}

/**
 * An onRequest hook: it runs before the body is read, so a caller without a credential never
 * gets the body parsed and learns nothing about the data or the schema.
 */
export function requireScope(findToken: FindToken, scope: string | undefined) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') throw unauthorized('a bearer token is required', false);
    const space = header.indexOf(' ');
    const scheme = space === -1 ? header : header.slice(0, space);
    if (scheme.toLowerCase() !== 'bearer') {
      throw unauthorized('a bearer token is required (Authorization: Bearer <token>)', false);
    }
    const token = header.slice(space + 1).trim();
    if (space === -1 || !isWellFormedToken(token)) throw unauthorized('the bearer token is malformed', true);
    const record = await findToken(hashToken(token));
    if (!record) throw unauthorized('the bearer token is not valid', true);
    if (record.revokedAt !== null) throw unauthorized('the bearer token has been revoked', true);
    if (!isActive(record)) throw unauthorized('the bearer token has expired', true);
    request.principal = record;
    if (scope !== undefined && !(record.scopes as string[]).includes(scope)) {
      throw new HttpError(403, `this operation needs the scope ${scope}`, {
        'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"`,
      });
    }
  };
}
