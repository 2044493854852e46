import type { FastifyRequest, onRequestHookHandler } from 'fastify';
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
import { verifyTicket } from '../../auth/verify-ticket.js';
import { repeated } from '../headers/header-checks.js';
import { prefersEventStream } from '../headers/negotiate.js';
import { routeOf } from '../route-of.js';
import { HttpError } from '../errors/http-error.js';
import { registerRateLimits } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The bearer check of an operation that needs `scope` (any valid credential when undefined). */
    authenticate(scope: string | undefined): onRequestHookHandler;
  }
  interface FastifyRequest {
    /** Who authenticated this request, if anyone. */
    principal?: Principal;
    /** The stream ticket it authenticated with, instead of Authorization (the changes stream only). */
    ticket?: string | undefined;
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
/** The query's `ticket`, read only when the URL can hold one: every request passes here. */
function ticketOf(request: FastifyRequest): string | undefined {
  const { url } = request;
  const query = url.indexOf('?');
  if (query === -1 || !url.includes('ticket=', query)) return undefined;
  return new URLSearchParams(url.slice(query)).get('ticket') ?? undefined;
}

/** A ticket anywhere but the changes stream, an operation without credentials included: 401. */
export function ticketElsewhere(): UnauthenticatedError {
  return new UnauthenticatedError(
    'a ticket opens only the changes stream (GET /plants/changes?ticket=… with Accept: text/event-stream); send Authorization: Bearer <token>',
    false,
  );
}

/**
 * A ticket opens the changes stream and nothing else (a page's EventSource, which cannot send
 * Authorization): on any other request it is 401, as a credential in a query string is; beside
 * Authorization, 400 (one credential a request).
 */
function refuseTicketHere(request: FastifyRequest): void {
  const stream =
    request.method === 'GET' &&
    routeOf(request).config.route === '/plants/changes' &&
    prefersEventStream(request.headers.accept);
  if (!stream) throw ticketElsewhere();
  if (request.headers.authorization !== undefined) {
    throw new HttpError(400, 'send a ticket or Authorization, not both');
  }
}

export const authPlugin = fp<AuthOptions>(
  async (app, { config, verifiers, metrics }) => {
    const limits = await registerRateLimits(app, config, metrics.rateLimited);
    app.decorate('authenticate', (scope: string | undefined): onRequestHookHandler => {
      return async function authenticate(request, reply) {
        if (repeated(request.raw, 'authorization')) {
          throw new HttpError(400, 'the Authorization header is given more than once; send one');
        }
        const ticket = ticketOf(request);
        if (ticket !== undefined) refuseTicketHere(request);
        const token = ticket ?? bearerCredential(request.headers.authorization);
        limits?.checkAddress(request);
        let principal: Principal;
        try {
          principal =
            ticket !== undefined ? await verifyTicket(ticket, verifiers, true) : await verifyBearer(token, verifiers);
        } catch (err) {
          if (limits && err instanceof UnauthenticatedError) await limits.recordFailure(request);
          throw err;
        }
        request.principal = principal;
        request.ticket = ticket;
        requireScope(principal, scope);
        if (limits) await limits.countToken(request, reply, principal.limitKey);
      };
    });
  },
  { name: 'auth' },
);
