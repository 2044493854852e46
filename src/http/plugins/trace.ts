import { routeOf } from '../route-of.js';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import { redactUrl } from '../../log.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span, in the trace its `traceparent` continues (or a new one). */
    traceContext: Context | undefined;
  }
}

/** The path as the log shows it: a credential pasted into it never leaves the process (log.ts). */
const pathOf = (url: string) => redactUrl(url.split('?', 1)[0]!);

function startSpan(tracer: Tracer, request: FastifyRequest): Context {
  // The caller's trace (W3C traceparent and tracestate), or none: a new trace.
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  // The document's path template (`/plants/{id}`), as the metrics' `route` label and docs/reference/metrics.md
  // name it, so that dashboards join spans and metrics; not Fastify's `/plants/:id`.
  const route = routeOf(request).config.route;
  const agent = request.headers['user-agent'];
  const span = tracer.startSpan(
    route ? `${request.method} ${route}` : request.method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_URL_PATH]: pathOf(request.url),
        [ATTR_URL_SCHEME]: request.protocol,
        [ATTR_NETWORK_PROTOCOL_VERSION]: request.raw.httpVersion,
        [ATTR_CLIENT_ADDRESS]: request.ip,
        ...(route && { [ATTR_HTTP_ROUTE]: route }),
        ...(agent && { [ATTR_USER_AGENT_ORIGINAL]: agent }),
      },
    },
    parent,
  );
  return trace.setSpan(parent, span);
}

/**
 * A server span per request (HTTP semantic conventions), continuing the caller's W3C trace. The
 * handler runs in it, so the store transaction a write opens and the webhook deliveries of its
 * changes are in its trace; every log line of the request carries its `traceId` and `spanId`.
 * Registered only when traces are on (app.ts), first, so that it sees every routed request, and
 * its onResponse hook runs before the others.
 */
export const tracePlugin = fp(
  async (app) => {
    const tracer = trace.getTracer('plant-store');
    app.decorateRequest('traceContext', undefined);
    app.addHook('onRequest', (request, _reply, done) => {
      const ctx = startSpan(tracer, request);
      request.traceContext = ctx;
      const { traceId, spanId } = trace.getSpanContext(ctx)!;
      // Added to the request's own logger (Fastify's child, shared with the reply): a child of it
      // would cost each request several times as much.
      (request.log as unknown as Logger).setBindings({ traceId, spanId });
      done();
    });
    // The handler (and what it awaits) runs in the request's context: hooks that call `done`
    // go on to the handler synchronously, inside `with`.
    app.addHook('preHandler', (request, _reply, done) => context.with(request.traceContext!, done));
    app.addHook('onResponse', (request, reply, done) => {
      const span = trace.getSpan(request.traceContext!)!;
      const status = reply.statusCode;
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A server's span is an error for 5xx only: a 4xx is the client's.
      if (status >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
      // What the later hooks start outlives the request (the dispatcher's look for deliveries,
      // nudged by a write): it is no part of the request's trace.
      context.with(ROOT_CONTEXT, done);
    });
  },
  { name: 'trace' },
);
