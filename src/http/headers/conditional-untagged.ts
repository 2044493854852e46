// If-Match and If-None-Match on the operations whose representations carry no ETag: a page of
// the list, a creation's target (the collection), the health answers, the document, the API
// reference and the metrics. RFC 9110 13.1 has an origin server evaluate them on every request
// that selects a representation, and such a representation exists and matches no entity tag:
// `If-Match: *` and `If-None-Match: "…"` hold, `If-Match: "…"` and `If-None-Match: *` fail.
import { routeOf } from '../route-of.js';
import type { FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { failedPrecondition, type FailedPrecondition } from '../../domain/preconditions.js';
import { preconditions } from './conditional.js';
import { HttpError } from '../errors/http-error.js';

/** A GET or HEAD whose conditions fail, answered once its handler has: the headers it had before. */
const pending = new WeakMap<FastifyRequest, { failed: FailedPrecondition; before: Set<string> }>();

/** The 412 of a request on `target`, a resource without an ETag, whose `failed` condition does not hold. */
export function refusalWithoutEtag(target: string, failed: FailedPrecondition): HttpError {
  return new HttpError(
    412,
    failed === 'If-Match'
      ? `${target} has no ETag, so only If-Match: * can hold`
      : `${target} exists, so If-None-Match: * does not hold; nothing changed`,
  );
}

function refusal(request: FastifyRequest, failed: FailedPrecondition): HttpError {
  return refusalWithoutEtag(routeOf(request).config.route ?? request.url, failed);
}

/**
 * A preHandler: reads the conditions (400 when malformed). A change (POST) they fail is refused
 * at once, before anything is written. A read goes on: its answer is replaced only if it would
 * have been 2xx, since a request that fails without its conditions ignores them (13.2.1).
 */
export const checkWithoutEtag: preHandlerHookHandler = function (request, reply, done) {
  const conditions = preconditions(request.headers);
  const failed = conditions && failedPrecondition(conditions, undefined);
  if (failed === undefined) return done();
  if (request.method !== 'GET' && request.method !== 'HEAD') throw refusal(request, failed);
  pending.set(request, { failed, before: new Set(Object.keys(reply.getHeaders())) });
  done();
};

/**
 * An onSend hook: a read's 2xx becomes 412 for If-Match, with only the headers set before its
 * handler ran (none of the page's: no Link, no Cache-Control a cache could keep it by), or 304
 * without a body for If-None-Match (13.2.2: GET and HEAD answer 304 where others answer 412).
 */
export const answerWithoutEtag: onSendHookHandler = function (request, reply, payload, done) {
  const refused = pending.get(request);
  if (refused === undefined || reply.statusCode < 200 || reply.statusCode > 299) return done(null, payload);
  pending.delete(request);
  if (refused.failed === 'If-Match') {
    for (const name of Object.keys(reply.getHeaders())) if (!refused.before.has(name)) reply.removeHeader(name);
    throw refusal(request, refused.failed);
  }
  reply.code(304).removeHeader('content-type').removeHeader('content-length');
  done(null, null);
};
