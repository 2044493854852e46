import { routeOf } from '../route-of.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { pino, type Logger } from 'pino';
import { StoreUnavailableError } from '../../domain/errors.js';
import { redactUrl } from '../../log.js';
import { NO_ROUTE, type Metrics } from '../../metrics/metrics.js';
import { hostProblem } from '../headers/header-checks.js';
import { HttpError } from '../errors/http-error.js';
import { RequestLogger } from '../request-logger.js';

const { chindingsSym, streamSym } = pino.symbols;
/** What pino keeps of a logger under its symbols: the bindings as JSON text, and where lines go. */
type PinoInside = Logger & Record<symbol, unknown>;

/**
 * The one log line of a request, with its request id (pino's `reqId`), never a token. Written as
 * pino writes it (level, time, the logger's bindings, the fields, msg), but built as one template:
 * pino's general path (merging an object, serialising it field by field) cost more than any other
 * part of the line, on every request.
 */
export function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  const log = request.log as unknown as RequestLogger | PinoInside;
  if (!log.isLevelEnabled('info')) return;
  // A request Fastify refused before routing may carry pino's own child.
  const chindings = log instanceof RequestLogger ? log.chindings : (log[chindingsSym] as string);
  const principal = request.principal;
  const who =
    principal?.id === undefined
      ? ''
      : `,"${principal.kind === 'token' ? 'tokenId' : 'sub'}":${JSON.stringify(principal.id)}`;
  const line =
    `{"level":30,"time":${Date.now()}${chindings},"method":${JSON.stringify(request.method)}` +
    `,"url":${JSON.stringify(redactUrl(request.url))},"status":${reply.statusCode}` +
    `,"ms":${Math.round(reply.elapsedTime * 10) / 10}${who},"msg":"request"}\n`;
  ((request.server.log as PinoInside)[streamSym] as { write(line: string): unknown }).write(line);
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
      const route = routeOf(request).config.route ?? NO_ROUTE;
      metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    app.addHook('onError', async (_request, _reply, err) => {
      if (err instanceof StoreUnavailableError) metrics.storeError();
    });
  },
  { name: 'request-log' },
);
