import { request as httpRequest } from 'node:http';
import { readJson } from '../../src/json/read-json.js';
import { checkResponse } from './conformance.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed with JSON.parse (undefined when empty or not JSON); use `text` for exact ids. */
  json: unknown;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent byte for byte; a string is sent as UTF-8, a Buffer as is. */
  body?: string | Buffer;
}

/** A response as the checks read it: the body's text, and the body parsed with JSON.parse when it is JSON. */
export function rawResponse(status: number, headers: RawResponse['headers'], text: string): RawResponse {
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status, headers, text, json };
}

/** Throws when a response disagrees with the OpenAPI document (see conformance.ts). */
export function assertConforms(method: string, path: string, response: RawResponse): void {
  const problems = checkResponse(method, path, response);
  if (problems.length) throw new Error(`response disagrees with the OpenAPI document: ${problems.join('; ')}`);
}

/** `fetch` for clients under test: every response is checked against the document like send()'s. */
export async function conformingFetch(request: Request): Promise<Response> {
  const response = await fetch(request);
  const headers = Object.fromEntries(response.headers);
  assertConforms(
    request.method,
    new URL(request.url).pathname,
    rawResponse(response.status, headers, await response.clone().text()),
  );
  return response;
}

/** Where a test sends requests: a base URL (a real socket), or an app built in-process (`inject`). */
export type Target = string | { inject(req: RawRequest): Promise<RawResponse> };

/**
 * Sends exactly the bytes given, with no client-side JSON encoding in the way, so tests can
 * send malformed JSON, exact int64 literals and odd headers. Every response is checked against
 * the OpenAPI document, whichever way it travelled.
 */
export function send(target: Target, req: RawRequest): Promise<RawResponse> {
  if (typeof target !== 'string') return target.inject(req);
  const url = new URL(req.path, target);
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, { method: req.method ?? 'GET', headers: req.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const response = rawResponse(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'));
        // Every response a test receives is also checked against the OpenAPI document.
        try {
          assertConforms(req.method ?? 'GET', url.pathname, response);
          resolve(response);
        } catch (err) {
          reject(err as Error);
        }
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    r.setTimeout(20_000, () => r.destroy(new Error('request timed out')));
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

/** POST /plants with a raw JSON text and a token. */
export function postPlant(
  baseUrl: Target,
  token: string | undefined,
  body: string | Buffer,
  headers: Record<string, string> = {},
) {
  return send(baseUrl, {
    method: 'POST',
    path: '/plants',
    headers: {
      'content-type': 'application/json',
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body,
  });
}

/** Every plant a server lists, following its Link headers, ids exact; bounded to 1,000 pages. */
export async function listAllPlants(
  baseUrl: Target,
  token: string,
): Promise<{ id: bigint; name: string; tag?: string }[]> {
  const plants: { id: bigint; name: string; tag?: string }[] = [];
  let next: string | undefined = '/plants?limit=1000';
  for (let page = 0; next !== undefined; page++) {
    if (page === 1000) throw new Error('more than 1,000 pages');
    const res = await send(baseUrl, { path: next, headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`GET ${next} answered ${res.status}: ${res.text}`);
    for (const p of readJson(res.text) as { id: number | bigint; name: string; tag?: string }[]) {
      plants.push({ id: BigInt(p.id), name: p.name, ...(p.tag !== undefined && { tag: p.tag }) });
    }
    next = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1];
  }
  return plants;
}
