import type { FastifyRequest } from 'fastify';
import type { ApiDocument } from '../openapi/document.js';
import { HttpError } from './http-error.js';

/**
 * Answers for requests that match no route, from the document's paths: a known path with
 * another method is 405 with `Allow`, anything else 404. It runs before authentication, so
 * it reveals only what the published document already says.
 */
export function routeNotFound(doc: ApiDocument) {
  return async function (request: FastifyRequest): Promise<void> {
    if (!request.is404) return;
    const path = request.url.split('?')[0] ?? '';
    const known = doc.paths.find((p) => p.pattern.test(path));
    if (!known) throw new HttpError(404, `no route for ${request.method} ${path}`);
    const allow = known.methods.join(', ');
    throw new HttpError(405, `${request.method} is not allowed on ${known.path}; allowed: ${allow}`, { allow });
  };
}
