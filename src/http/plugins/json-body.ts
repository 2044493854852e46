import { routeOf } from '../route-of.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readJson, JsonReadError } from '../../json/read-json.js';
import { bodyTooLarge } from '../errors/error-handler.js';
import { inviteBody } from '../connections/expect.js';
import { declaresBody, repeated } from '../headers/header-checks.js';
import { HttpError } from '../errors/http-error.js';

/** The media types a request body may have: each operation takes one of them (the document says which). */
const BODY_MEDIA_TYPES = ['application/json', 'application/merge-patch+json'];

/**
 * One `;` and the parameter after it, if any (RFC 9110 8.3.1, 5.6.6), read from where the previous
 * one ended: a token name, `=`, and a token or a quoted string. A quoted value may hold `;` and
 * `=`, so the parameters are read one by one, never split on `;`.
 */
const PARAMETER =
  /[ \t]*;[ \t]*(?:([!#$%&'*+.^_`|~0-9A-Za-z-]+)=([!#$%&'*+.^_`|~0-9A-Za-z-]+|"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"))?/y;

/** `wanted`, with any parameters, as long as a charset (if given) is UTF-8; a malformed value is not it. */
function isMediaType(type: string, wanted: string): boolean {
  const semicolon = type.indexOf(';');
  const essence = semicolon === -1 ? type : type.slice(0, semicolon);
  if (essence.replace(/^[ \t]+|[ \t]+$/g, '').toLowerCase() !== wanted) return false;
  for (let at = semicolon; at !== -1 && at < type.length; at = PARAMETER.lastIndex) {
    PARAMETER.lastIndex = at;
    const m = PARAMETER.exec(type);
    if (!m) return /^[ \t]*$/.test(type.slice(at));
    const value = m[2]?.startsWith('"') ? m[2].slice(1, -1).replace(/\\(.)/g, '$1') : m[2];
    if (m[1]?.toLowerCase() === 'charset' && value?.toLowerCase() !== 'utf-8') return false;
  }
  return true;
}

/**
 * The values a body within `limit` bytes may hold: one per 16 bytes (65,536 in a batch's 1 MiB,
 * 1,024 in a plant's 16 KiB), where a full batch of 1,000 operations needs about 8,000. Reading
 * `[{},{},…]` costs time and memory by the value, so a body of tiny ones stops here, not 340,000
 * objects later.
 */
export function valuesWithin(limit: number): number {
  return Math.max(1024, Math.floor(limit / 16));
}

/**
 * Replaces Fastify's JSON parsing with the strict, exact reader: one I-JSON object, int64 kept
 * digit for digit, duplicate names, lone surrogates and noncharacters refused. Also:
 * - an operation without a request body ignores Content-Type when the request has no body,
 *   and refuses a body (400) without reading it;
 * - a response to a request whose body was not read (refused before it: 401, 403, 404, 413,
 *   415, ...) closes the connection, so the body is never read and never answered twice.
 */
export function registerJsonBody(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(BODY_MEDIA_TYPES, { parseAs: 'buffer', bodyLimit }, (req, body, done) => {
    try {
      done(null, readJson(body as Buffer, { maxValues: valuesWithin(routeOf(req).bodyLimit ?? bodyLimit) }));
    } catch (err) {
      done(err instanceof JsonReadError ? new HttpError(400, err.message) : (err as Error), undefined);
    }
  });
  app.addHook('preParsing', refuseBodyWhereNoneIsTaken);
  app.addHook('onSend', closeWhenBodyUnread);
}

/** Operations without a request body: no body is no body, whatever Content-Type says; a body is refused. */
async function refuseBodyWhereNoneIsTaken(request: FastifyRequest): Promise<void> {
  if (routeOf(request).schema?.body !== undefined) return;
  if (declaresBody(request.headers)) {
    const route = routeOf(request).config.route ?? routeOf(request).url ?? request.url;
    throw new HttpError(400, `${request.method} ${route} takes no request body`);
  }
  // Without a body there is nothing to parse: Fastify would otherwise parse "nothing" as JSON
  // (400, body is empty) or refuse its media type (415) for a DELETE that names one. Fastify
  // takes only the literal "0" for a zero Content-Length, so "00" is written as "0".
  delete request.raw.headers['content-type'];
  if (request.raw.headers['content-length'] !== undefined) request.raw.headers['content-length'] = '0';
}

/**
 * The body of a refused request is never read: the response says `Connection: close` and the
 * server ends the connection once it is sent, instead of reading (and discarding) whatever the
 * client goes on sending. A request answered after its body was read (200, 409) keeps its
 * connection (a body that does not parse closes it: Fastify's own rule).
 */
async function closeWhenBodyUnread(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // `complete` is Node's "the whole message was received" (undefined under inject, where it always is).
  if (request.raw.complete === false && declaresBody(request.headers)) reply.header('connection', 'close');
}

/**
 * A preParsing hook for routes that take a body in `mediaType`: the media type is checked before
 * a single byte of the body is read, so 415 comes before 413 and 400; a declared length over the
 * limit is 413 at once; only then is a client that sent `Expect: 100-continue` invited to send it.
 */
export function requireContentType(mediaType: string) {
  // A synchronous preParsing hook: done() keeps the payload stream as it is (see request-log.ts).
  return function (request: FastifyRequest, reply: FastifyReply, _payload: unknown, done: () => void): void {
    const { headers } = request;
    const type = headers['content-type'];
    if (type === undefined && !declaresBody(headers)) return done();
    // A singleton field (RFC 9110 8.3): see `repeated`.
    if (repeated(request.raw, 'content-type')) {
      throw new HttpError(400, 'Content-Type is given more than once; send one');
    }
    if (type === undefined || !isMediaType(type, mediaType)) {
      throw new HttpError(415, `Content-Type must be ${mediaType} (charset=utf-8 is allowed)`);
    }
    admitBody(request, reply);
    done();
  };
}

function admitBody(request: FastifyRequest, reply: FastifyReply): void {
  const { headers } = request;
  const limit = routeOf(request).bodyLimit;
  const length = Number(headers['content-length']);
  if (limit !== undefined && Number.isFinite(length) && length > limit) throw bodyTooLarge(limit);
  inviteBody(request.raw, reply.raw);
}
