import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  PreconditionFailedError,
  UnauthenticatedError,
  UnavailableError,
} from '../domain/errors.js';
import { closeAfter } from './connections.js';
import { HttpError } from './http-error.js';

// node:http is taken with process.getBuiltinModule, not an ESM import: an ESM import builds a
// facade that reads every export, and Node 24's lazy WebSocket export then loads undici (the
// engine of fetch) at every start, some 40 ms of it (docs/performance.md, start-up). Types come
// from `import type`, which compiles to nothing.
const { STATUS_CODES } = process.getBuiltinModule('node:http');

const REALM = 'Bearer realm="plant-store"';

/** The 413 message: it states the limit, so a client knows what to send instead. */
export function bodyTooLarge(limit: number | undefined): HttpError {
  return new HttpError(413, `request body is larger than the limit${limit === undefined ? '' : ` of ${limit} bytes`}`);
}

/** Fastify's own client errors, re-worded: its messages can name internals, ours never do. */
const FRAMEWORK_ERRORS: Record<string, (err: FastifyError, request?: FastifyRequest) => HttpError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (_err, request) => bodyTooLarge(request?.routeOptions.bodyLimit),
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
    return reply.code(500).send({ error: 500, message: `internal error (request id ${request.id})` });
  }
  if (known.statusCode >= 500) request.log.warn({ err }, known.message);
  return reply.code(known.statusCode).headers(known.headers).send({ error: known.statusCode, message: known.message });
}

/** The bytes of a whole response written straight to a socket: the Error shape, then the connection closes. */
function rawErrorResponse(status: number, message: string): string {
  const body = JSON.stringify({ error: status, message });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nx-request-id: ${randomUUID()}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Malformed requests rejected by Node's HTTP parser, and requests whose headers or whole request
 * took too long, never reach Fastify; they still get the Error shape, and the connection is closed
 * (for good: closeAfter) because its framing cannot be trusted.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'the request took too long to arrive']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'request headers are too large']
        : [400, 'malformed HTTP request'];
  closeAfter(socket, rawErrorResponse(status, message));
}

/** Requests that asked for `100 Continue` (Expect: 100-continue) and have not been given it yet. */
const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * Sends `100 Continue` to a request that asked for it: called once the request has passed
 * routing, the credential, the content type and the declared size, so a refused request's
 * body is never invited.
 */
export function inviteBody(req: IncomingMessage, res: ServerResponse): void {
  if (!awaitingContinue.has(req)) return;
  awaitingContinue.delete(req);
  res.writeContinue();
}

/**
 * A request that declares a body: a Content-Length other than 0, or a Transfer-Encoding. Zero is
 * any run of 0 digits (`00` is a valid Content-Length of zero, RFC 9110 8.6).
 */
export function declaresBody(headers: IncomingMessage['headers']): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && !/^\s*0+\s*$/.test(length));
}

/**
 * What is wrong with a request's Host, if anything: HTTP/1.1 requires exactly one (RFC 9112 3.2:
 * 400 without it, and with more than one). Node's own check answers a bare 400 to a missing one
 * and keeps the first of several; this one answers both in the Error shape.
 */
export function hostProblem(req: IncomingMessage): string | undefined {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
    return 'the Host header is required in an HTTP/1.1 request';
  }
  return repeated(req, 'host') ? 'the Host header is given more than once; send one' : undefined;
}

/**
 * Whether the request has more than one field line named `name` (lower case). Node keeps the
 * first of a singleton field (Host, Authorization, Content-Type) and drops the others unseen;
 * a client that sent two meant one of them, and this server will not guess which.
 */
export function repeated(req: IncomingMessage, name: string): boolean {
  // Counted in rawHeaders: req.headersDistinct would build an array for every header of every
  // request (about 1.5% of the server's CPU under POST) to answer this one question.
  let seen = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const field = req.rawHeaders[i]!;
    if (field.length === name.length && field.toLowerCase() === name && ++seen > 1) return true;
  }
  return false;
}

/**
 * What Node answers by itself, the Error shape instead of bare statuses or dropped sockets
 * (every response is `{error, message}` with `x-request-id`):
 * - `Expect` other than 100-continue: 417 (Node's own 417 has no body);
 * - `Expect: 100-continue`: no automatic `100 Continue`; the request goes on, and `inviteBody`
 *   sends it once the request has been accepted;
 * - `CONNECT`: 501, this is not a proxy (Node would drop the connection).
 * Malformed requests are `clientErrorHandler`'s; a missing Host is checked by the app (the
 * server is created with `requireHostHeader: false`).
 */
export function guardHttpServer(server: Server): void {
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({
      error: 417,
      message: 'the Expect header can only be 100-continue',
    });
    res.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': randomUUID(),
      connection: 'close',
    });
    res.end(body);
  });
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    awaitingContinue.add(req);
    server.emit('request', req, res);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    closeAfter(socket, rawErrorResponse(501, 'CONNECT is not supported: this server is not a proxy'));
  });
}
