import type { onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import {
  bearerCredential,
  requireScope,
  verifyBearer,
  type Principal,
  type Verifiers,
} from '../../auth/verify-bearer.js';
import type { Config } from '../../config/config.js';
import { UnauthenticatedError } from '../../domain/errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import { repeated } from '../header-checks.js';
import { HttpError } from '../http-error.js';
import { registerRateLimits } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The bearer check of an operation that needs `scope` (any valid credential when undefined). */
    authenticate(scope: string | undefined): onRequestHookHandler;
  }
  interface FastifyRequest {
    /** Who authenticated this request, if anyone. */
    principal?: Principal;
  }
}

export interface AuthOptions {
  config: Config;
  verifiers: Verifiers;
  metrics: Metrics;
}

/**
 * Bearer authentication and the rate limits tied to it. The check is an onRequest hook: it runs
 * before the body is read, so a caller without a credential never gets the body parsed and
 * learns nothing about the data or the schema. Order: too many refused credentials from this
 * address (429), credential (401), scope (403), this token's rate limit (429).
 */
export const authPlugin = fp<AuthOptions>(
  async (app, { config, verifiers, metrics }) => {
    const limits = await registerRateLimits(app, config, metrics.rateLimited);
    app.decorate('authenticate', (scope: string | undefined): onRequestHookHandler => {
      return async function authenticate(request, reply) {
        if (repeated(request.raw, 'authorization')) {
          throw new HttpError(400, 'the Authorization header is given more than once; send one');
        }
        const token = bearerCredential(request.headers.authorization);
        limits?.checkAddress(request);
        let principal: Principal;
        try {
          principal = await verifyBearer(token, verifiers);
        } catch (err) {
          if (limits && err instanceof UnauthenticatedError) await limits.recordFailure(request);
          throw err;
        }
        request.principal = principal;
        requireScope(principal, scope);
        if (limits) await limits.countToken(request, reply, principal.limitKey);
      };
    });
  },
  { name: 'auth' },
);
