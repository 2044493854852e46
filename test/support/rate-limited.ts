// What every 429 carries, whichever limit refused the request (docs/guides/rate-limits.md).
import assert from 'node:assert/strict';
import type { RawResponse } from './http.js';

/** A 429 of a limit of `limit` per window of `windowSeconds`: the Error body, Retry-After and the RateLimit headers. */
export function assert429(r: RawResponse, limit: number, windowSeconds: number): void {
  assert.equal(r.status, 429, r.text);
  assert.deepEqual(r.json, { error: 429, message: (r.json as { message: string }).message });
  const retryAfter = Number(r.headers['retry-after']);
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds,
    `Retry-After ${retryAfter}`,
  );
  assert.equal(r.headers['ratelimit-limit'], String(limit));
  assert.equal(r.headers['ratelimit-remaining'], '0');
  assert.ok(Number(r.headers['ratelimit-reset']) >= 1);
}
