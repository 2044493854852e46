// The dispatcher's rules without a server: how a subscriber's Retry-After is read, what an
// attempt decides (and that every time it decides is one the stores can hold), and how the
// delivery slots are shared between endpoints.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import type { DueDelivery } from '../../src/domain/webhook.js';
import { fairShares } from '../../src/events/fair-share.js';
import { decideAttempt } from '../../src/events/outcome.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/events/retry-after.js';

describe("a subscriber's Retry-After", () => {
  const now = Date.UTC(1994, 10, 6, 8, 49, 27);

  it('reads seconds, bounded, and nothing else that looks like a number', () => {
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 120 ', now), 120_000);
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter('99999999999999999999', now), MAX_RETRY_AFTER_MS);
    assert.equal(parseRetryAfter('9'.repeat(400), now), MAX_RETRY_AFTER_MS);
    // Leading zeros are no part of the wait, however many.
    assert.equal(parseRetryAfter('0000000000000000002', now), 2_000);
    assert.equal(parseRetryAfter(`${'0'.repeat(400)}120`, now), 120_000);
    assert.equal(parseRetryAfter('0'.repeat(30), now), 0);
    assert.ok(Number.isSafeInteger(MAX_RETRY_AFTER_MS + Date.now()));
    for (const v of ['-5', '1.5', '1e3', '0x10', '+5', 'soon', '', '5 s', 'Infinity', 'NaN'])
      assert.equal(parseRetryAfter(v, now), null, v);
    assert.equal(parseRetryAfter(undefined, now), null);
  });

  it('reads the three HTTP-date forms as GMT, the past as no wait, the far future bounded', () => {
    assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now), 10_000);
    assert.equal(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now), 10_000);
    assert.equal(parseRetryAfter('Sun Nov  6 08:49:37 1994', now), 10_000);
    assert.equal(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', now), MAX_RETRY_AFTER_MS);
    // A two-digit year more than 50 years ahead is in the past century.
    const in2025 = Date.UTC(2025, 0, 1);
    assert.equal(parseRetryAfter('Saturday, 01-Jan-94 00:00:10 GMT', in2025), 0);
    assert.equal(parseRetryAfter('Tuesday, 01-Jan-30 00:00:00 GMT', in2025), Date.UTC(2030, 0, 1) - in2025);
    for (const v of [
      'Sun, 31 Feb 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 25:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:61 GMT',
      'Sun, 06 Nov 1994 08:49:37 CET',
      'Sun, 6 Nov 1994 08:49:37 GMT',
      '1994-11-06T08:49:37Z',
      'Nov 6 1994',
    ])
      assert.equal(parseRetryAfter(v, now), null, v);
  });
});

describe("an attempt's outcome", () => {
  const config = { ...loadConfig({}), webhookBackoffBaseMs: 1000, webhookBackoffMaxMs: 60_000 };
  const at = 1_700_000_000_000;
  const d: DueDelivery = {
    eventSeq: 1n,
    eventId: 'msg_x',
    type: 'plant.created',
    plantId: 1n,
    body: '{}',
    eventCreatedAt: at - 1000,
    windowFrom: at - 1000,
    endpointId: 'ep_x',
    url: 'http://127.0.0.1:9/',
    secret: 'whsec_AAAA',
    attempts: 0,
  };
  const window = config.webhookRetryWindowMs;

  it('gives up at once when a Retry-After reaches past the retry window, and stores only whole times', () => {
    const asks = (retryAfterMs: number) => decideAttempt(d, { status: 503, error: null, retryAfterMs }, at, config);
    const past = asks(MAX_RETRY_AFTER_MS);
    assert.equal(past.outcome, 'failed');
    assert.equal(past.nextAttemptAt, at);
    assert.equal(past.error, 'HTTP 503: its Retry-After reaches past the retry window');
    assert.equal(asks(window).outcome, 'failed', 'one millisecond past its end');
    const within = asks(window - 1000);
    assert.equal(within.outcome, 'retry');
    assert.equal(within.nextAttemptAt, at + window - 1000);
    for (const r of [past, within]) assert.ok(Number.isSafeInteger(r.nextAttemptAt) && Number.isSafeInteger(r.at));
  });

  it('gives up when the backoff reaches past the window; 410 disables; 2xx delivers', () => {
    const late = { ...d, eventCreatedAt: at - window + 500, windowFrom: at - window + 500 };
    const r = decideAttempt(
      late,
      { status: null, error: 'ECONNREFUSED: refused', retryAfterMs: null },
      at,
      config,
      () => 0,
    );
    assert.deepEqual([r.outcome, r.nextAttemptAt, r.error], ['failed', at, 'ECONNREFUSED: refused']);
    const gone = decideAttempt(d, { status: 410, error: null, retryAfterMs: null }, at, config);
    assert.deepEqual([gone.outcome, gone.disableEndpoint], ['failed', 'the endpoint answered 410 Gone']);
    const ok = decideAttempt(d, { status: 204, error: null, retryAfterMs: MAX_RETRY_AFTER_MS }, at, config);
    assert.deepEqual([ok.outcome, ok.error, ok.nextAttemptAt], ['delivered', null, at]);
  });

  it('keeps error text from a peer as the stores can hold it: no control characters, bounded', () => {
    const error = `CERT: altnames DNS:a\u0000b\r\n${'x'.repeat(10_000)}`;
    const r = decideAttempt(d, { status: null, error, retryAfterMs: null }, at, config);
    assert.equal(r.outcome, 'retry');
    assert.ok(r.error!.length <= 500);
    assert.match(r.error!, /^CERT: altnames DNS:a b x+…$/);
  });
});

describe('the delivery slots', () => {
  const shares = (inFlight: Record<string, number>, due: string[], enabled: number, slots = 16) =>
    Object.fromEntries(fairShares(slots, new Map(Object.entries(inFlight)), due, enabled));

  it('go to a lone endpoint whole, and to one of several up to half, keeping room for the others', () => {
    assert.deepEqual(shares({}, ['a'], 1), { a: 16 });
    assert.deepEqual(shares({}, ['a'], 2), { a: 8 });
    assert.deepEqual(shares({}, ['a'], 20), { a: 8 });
  });

  it('are shared among the busy endpoints, the fewest in flight first, never past a share', () => {
    // A subscriber that hangs holds its 8; the other gets the rest at once.
    assert.deepEqual(shares({ hung: 8 }, ['hung', 'ok'], 2), { ok: 8 });
    assert.deepEqual(shares({ hung: 8, ok: 8 }, ['hung', 'ok'], 2), {});
    assert.deepEqual(shares({ hung: 8, ok: 3 }, ['hung', 'ok'], 2), { ok: 5 });
    // Three busy of three: a third each (5), the fewest in flight first.
    assert.deepEqual(shares({}, ['a', 'b', 'c'], 3), { a: 5, b: 5, c: 5 });
    assert.deepEqual(shares({ a: 5 }, ['a', 'b', 'c'], 5), { b: 4, c: 4 });
    // More busy endpoints than slots: one each, as far as the slots go.
    const many = Array.from({ length: 20 }, (_, i) => `e${i}`);
    const granted = shares({}, many, 20);
    assert.equal(Object.keys(granted).length, 16);
    assert.ok(Object.values(granted).every((n) => n === 1));
    assert.deepEqual(shares({ a: 1 }, ['b'], 2, 1), {}, 'no free slot');
  });
});
