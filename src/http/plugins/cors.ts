// Pages on other origins as clients (PRODUCT.md §4, Browsers): CORS for the origins of
// CORS_ORIGINS, on the plant API only, and for no one else. Written here rather than with
// @fastify/cors, which answers a preflight from an origin it refuses with 204 (here 403), lists
// one set of methods for every path (here each path's, from the contract), and adds an
// `OPTIONS *` route that would stand in front of the contract's 405 for every other OPTIONS.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import type { ApiDocument } from '../../openapi/document.js';
import { HttpError } from '../errors/http-error.js';
import { addVary } from '../headers/vary.js';

/** The response headers a page reads (the rest of a response's are not shown to it without this). */
export const EXPOSED_HEADERS = [
  'ETag',
  'Link',
  'Change-Position',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'WWW-Authenticate',
  'X-Request-Id',
  'Allow',
  'traceparent',
].join(', ');

/** The request headers the API reads, which a page may send after its preflight. */
export const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'Last-Event-ID',
  'Change-Position',
  'X-Request-Id',
  'traceparent',
  'tracestate',
].join(', ');

/** How long a browser may keep a preflight's answer (Chromium keeps at most 2 hours). */
export const PREFLIGHT_MAX_AGE_S = 3600;

export interface CorsOptions {
  origins: readonly string[];
  doc: ApiDocument;
}

/**
 * Only the plant API's paths: `/healthz`, `/readyz`, `/metrics`, the document and `/docs` are
 * for operators and this server's own pages, and send no CORS header.
 */
const isPlantPath = (path: string) => path === '/plants' || path.startsWith('/plants/');

export const corsPlugin = fp<CorsOptions>(
  async (app: FastifyInstance, { origins, doc }) => {
    if (origins.length === 0) return;
    const allowed = new Set(origins);
    const plantPaths = doc.paths.filter((p) => isPlantPath(p.path));
    // Synchronous (it calls done), as the request log's hooks are: see request-log.ts.
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const path = request.url.split('?')[0] ?? '';
      if (!isPlantPath(path)) return done();
      // Whatever the origin, the answer depends on it: a cache must not hand one origin's to another.
      addVary(reply, 'Origin');
      const origin = request.headers.origin;
      const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
      const ok = origin !== undefined && allowed.has(origin);
      if (preflight) {
        const known = plantPaths.find((p) => p.pattern.test(path));
        if (!known) return done();
        if (!ok) {
          throw new HttpError(
            403,
            `pages of the origin ${JSON.stringify(origin ?? '')} may not call this API (CORS_ORIGINS)`,
          );
        }
        addVary(reply, 'Access-Control-Request-Method');
        addVary(reply, 'Access-Control-Request-Headers');
        reply
          .code(204)
          .header('access-control-allow-origin', origin)
          .header('access-control-allow-methods', known.methods.join(', '))
          .header('access-control-allow-headers', ALLOWED_HEADERS)
          .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S))
          .send();
        return;
      }
      if (ok) allowOrigin(reply, origin);
      done();
    });
  },
  { name: 'cors' },
);

function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-expose-headers', EXPOSED_HEADERS);
}

/**
 * The CORS headers of an answer Fastify makes before any hook runs (a URL it cannot decode): for
 * an allowed origin a page must read why it failed there too. None when `origins` is empty.
 */
export function corsOfRefusals(origins: readonly string[]): (request: FastifyRequest, reply: FastifyReply) => void {
  const allowed = new Set(origins);
  return (request, reply) => {
    if (allowed.size === 0 || !isPlantPath(request.url.split('?')[0] ?? '')) return;
    addVary(reply, 'Origin');
    const { origin } = request.headers;
    if (origin !== undefined && allowed.has(origin)) allowOrigin(reply, origin);
  };
}
