import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readJson, JsonReadError } from '../../json/read-json.js';
import { HttpError } from '../http-error.js';

/** `application/json`, with any parameters, as long as a charset (if given) is UTF-8. */
function isJsonMediaType(type: string): boolean {
  const [essence, ...params] = type.split(';');
  if (essence?.trim().toLowerCase() !== 'application/json') return false;
  return params.every((p) => {
    const [name, value = ''] = p.split('=');
    return name?.trim().toLowerCase() !== 'charset' || value.trim().replace(/^"|"$/g, '').toLowerCase() === 'utf-8';
  });
}

/**
 * Replaces Fastify's JSON parsing with the strict, exact reader: one I-JSON object, int64 kept
 * digit for digit, duplicate names and lone surrogates refused.
 */
export function registerJsonBody(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => {
    try {
      done(null, readJson(body as Buffer));
    } catch (err) {
      done(err instanceof JsonReadError ? new HttpError(400, err.message) : (err as Error), undefined);
    }
  });
}

/**
 * A preParsing hook for routes that take a body: the media type is checked before a single
 * byte of the body is read, so 415 comes before 413 and 400.
 */
export async function requireJsonContentType(request: FastifyRequest): Promise<void> {
  const { headers } = request;
  const hasBody =
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  const type = headers['content-type'];
  if (type === undefined && !hasBody) return;
  if (type === undefined || !isJsonMediaType(type)) {
    throw new HttpError(415, 'Content-Type must be application/json (charset=utf-8 is allowed)');
  }
}
