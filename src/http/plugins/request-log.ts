import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { StoreUnavailableError } from '../../domain/errors.js';
import { redactUrl } from '../../log.js';
import { NO_ROUTE, type Metrics } from '../../metrics/metrics.js';
import { hostProblem } from '../header-checks.js';
import { HttpError } from '../http-error.js';

/** The one log line of a request, with its request id (pino's `reqId`), never a token. */
export function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  request.log.info(
    {
      method: request.method,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      ...(request.principal?.kind === 'token' && { tokenId: request.principal.id }),
      ...(request.principal?.kind === 'jwt' && { sub: request.principal.id }),
    },
    'request',
  );
}

/**
 * Every response carries `x-request-id`; every finished request is one log line and one
 * observation. A request without Host (HTTP/1.1) or with two is refused here, first, in the Error shape.
 */
export const requestLogPlugin = fp<{ metrics: Metrics }>(
  async (app, { metrics }) => {
    // Synchronous hooks, which call done: Fastify runs the next hook at once instead of a
    // promise's turn later. What one throws is handled as an async hook's rejection is.
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      const problem = hostProblem(request.raw);
      if (problem !== undefined) {
        reply.header('connection', 'close');
        throw new HttpError(400, problem);
      }
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      logRequest(request, reply);
      const route = request.routeOptions.config.route ?? NO_ROUTE;
      metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    app.addHook('onError', async (_request, _reply, err) => {
      if (err instanceof StoreUnavailableError) metrics.storeError();
    });
  },
  { name: 'request-log' },
);
