import { routeOf } from '../route-of.js';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  GoneError,
  NotFoundError,
  PreconditionFailedError,
  UnauthenticatedError,
  UnavailableError,
} from '../../domain/errors.js';
import { errorBody } from './error-body.js';
import { HttpError } from './http-error.js';

// Not an ESM import, whose facade would load undici at start: see error-body.ts.
const { STATUS_CODES } = process.getBuiltinModule('node:http');

const REALM = 'Bearer realm="plant-store"';

/** The 413 message: it states the limit, so a client knows what to send instead. */
export function bodyTooLarge(limit: number | undefined): HttpError {
  return new HttpError(413, `request body is larger than the limit${limit === undefined ? '' : ` of ${limit} bytes`}`);
}

/** Fastify's own client errors, re-worded: its messages can name internals, ours never do. */
const FRAMEWORK_ERRORS: Record<string, (err: FastifyError, request?: FastifyRequest) => HttpError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (_err, request) => bodyTooLarge(request && routeOf(request).bodyLimit),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new HttpError(415, 'Content-Type must be application/json (charset=utf-8 is allowed)'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new HttpError(400, 'body is empty; a JSON object is required'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new HttpError(400, 'Content-Length does not match the body'),
  FST_ERR_BAD_URL: () => new HttpError(400, 'the URL is not valid (bad percent-encoding)'),
  FST_ERR_MAX_PARAM_LENGTH: () => new HttpError(414, 'a path segment is too long'),
};

/**
 * The one place where a failure becomes a status: the domain's errors, the edge's own
 * HttpErrors and Fastify's client errors. Anything else is a bug (undefined: 500).
 */
export function toHttpError(err: unknown, request?: FastifyRequest): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof InvalidInputError) return new HttpError(400, err.message);
  if (err instanceof UnauthenticatedError) {
    return new HttpError(401, err.message, {
      'www-authenticate': err.presented ? `${REALM}, error="invalid_token"` : REALM,
    });
  }
  if (err instanceof ForbiddenError) {
    return new HttpError(403, err.message, {
      'www-authenticate': `${REALM}, error="insufficient_scope", scope="${err.scope}"`,
    });
  }
  if (err instanceof NotFoundError) return new HttpError(404, err.message);
  if (err instanceof ConflictError) return new HttpError(409, err.message);
  if (err instanceof GoneError) return new HttpError(410, err.message);
  if (err instanceof PreconditionFailedError) return new HttpError(412, err.message);
  if (err instanceof UnavailableError) {
    return new HttpError(503, err.message, { 'retry-after': String(err.retryAfterSeconds) });
  }
  const fe = err as Partial<FastifyError>;
  if (fe.code && fe.code in FRAMEWORK_ERRORS) return FRAMEWORK_ERRORS[fe.code]!(fe as FastifyError, request);
  // Aborted or unreadable bodies and other client faults Fastify knows of.
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new HttpError(fe.statusCode, (STATUS_CODES[fe.statusCode] ?? 'bad request').toLowerCase());
  }
  return undefined;
}

/** The one error handler: every failure leaves as `{error, message}` and hides internals. */
export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const known = toHttpError(err, request);
  if (!known) {
    request.log.error({ err }, 'unhandled error');
    return reply.code(500).send(errorBody(500, `internal error (request id ${request.id})`));
  }
  if (known.statusCode >= 500) request.log.warn({ err }, known.message);
  return reply.code(known.statusCode).headers(known.headers).send(errorBody(known.statusCode, known.message));
}
