import { isIP } from 'node:net';
import { guardedLookup, nonPublicReason } from './address-guard.js';
import { parseRetryAfter } from './retry-after.js';

// Not ESM imports, whose facade would load undici at start: see src/http/error-body.ts.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

export interface SendResult {
  /** The answer's status, or null when none came (refused, reset, timed out, refused address). */
  status: number | null;
  error: string | null;
  /** Retry-After in milliseconds (bounded: retry-after.ts), when the answer carried a valid one. */
  retryAfterMs: number | null;
}

/**
 * One POST. Redirects are not followed (a 3xx is a failed attempt), the whole attempt is bounded
 * by `timeoutMs`, and the answer's body is read and dropped, at most 64 KiB of it.
 */
export function send(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  allowPrivate: boolean,
  signal?: AbortSignal,
): Promise<SendResult> {
  return new Promise((resolve) => {
    const target = new URL(url);
    // Node connects to an IP literal without calling `lookup`: the guard checks it here.
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    const reason = allowPrivate || isIP(literal) === 0 ? undefined : nonPublicReason(literal);
    if (reason !== undefined) {
      const error = `EPRIVATEADDRESS: ${literal} is not a public address (${reason}; WEBHOOK_ALLOW_PRIVATE is off)`;
      resolve({ status: null, error, retryAfterMs: null });
      return;
    }
    const request = target.protocol === 'https:' ? https.request : http.request;
    let settled = false;
    const done = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = request(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: guardedLookup(allowPrivate) as unknown as typeof import('node:dns').lookup,
      agent: false,
      ...(signal && { signal }),
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const retryAfter = parseRetryAfter(res.headers['retry-after']);
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > 65_536) res.destroy();
      });
      const finish = () => done({ status, error: null, retryAfterMs: retryAfter });
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({ status: null, error: err.code ? `${err.code}: ${err.message}` : err.message, retryAfterMs: null }),
    );
    req.end(body);
  });
}
