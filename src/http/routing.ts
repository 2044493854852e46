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
    if (!known) throw new HttpError(404, `no route for ${request.method} ${shorten(path)}`);
    const allow = known.methods.join(', ');
    throw new HttpError(405, `${request.method} is not allowed on ${known.path}; allowed: ${allow}`, { allow });
  };
}

/** Error messages are one line of at most 1024 characters (the Error schema); a path can be far longer. */
function shorten(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}
