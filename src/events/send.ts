import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { guardedLookup, nonPublicReason } from './address-guard.js';
import { parseRetryAfter } from './retry-after.js';

// Not ESM imports, whose facade would load undici at start: see src/http/errors/error-body.ts.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

export interface SendResult {
  /** The answer's status, or null when none came (refused, reset, timed out, refused address). */
  status: number | null;
  error: string | null;
  /** Retry-After in milliseconds (bounded: retry-after.ts), when the answer carried a valid one. */
  retryAfterMs: number | null;
  /** The answer's first `keepBytes` bytes, as text, when they were asked for and an answer came. */
  bodyStart?: string;
  /** Whether the answer's body went on past them. */
  bodyCut?: boolean;
}

export interface SendOptions {
  /** The whole attempt's bound: connect, send, answer. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE: loopback and private addresses may be reached. */
  allowPrivate: boolean;
  signal?: AbortSignal;
  /** How much of the answer's body to keep (`webhook test` prints it); none by default. */
  keepBytes?: number;
}

/**
 * One POST. Redirects are not followed (a 3xx is a failed attempt), the whole attempt is bounded
 * by `timeoutMs`, and the answer's body is read, at most 64 KiB of it, and dropped but for the
 * first `keepBytes`.
 */
export function send(
  url: string,
  headers: Record<string, string>,
  body: string,
  { timeoutMs, allowPrivate, signal, keepBytes = 0 }: SendOptions,
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
      req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const retryAfter = parseRetryAfter(res.headers['retry-after']);
      const kept: Buffer[] = [];
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        if (read < keepBytes) kept.push(chunk.subarray(0, keepBytes - read));
        read += chunk.length;
        if (read > 65_536) res.destroy();
      });
      const finish = () =>
        done({
          status,
          error: null,
          retryAfterMs: retryAfter,
          // Whole characters: a StringDecoder holds back a character the last byte kept cuts in two.
          ...(keepBytes > 0 && {
            bodyStart: new StringDecoder('utf8').write(Buffer.concat(kept)),
            bodyCut: read > keepBytes,
          }),
        });
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
