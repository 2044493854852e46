// What an endpoint's last failure says (`webhook list`), from the outcomes of real attempts
// against a subscriber on 127.0.0.1; what `webhook redeliver` takes for an id; and the first bytes
// of an answer that `webhook test` prints.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/config.js';
import { redeliveryTarget } from '../../src/domain/delivery-id.js';
import type { DueDelivery } from '../../src/domain/webhook.js';
import { failureReason } from '../../src/events/failure-reason.js';
import { decideAttempt } from '../../src/events/outcome.js';
import { send } from '../../src/events/send.js';
import { eventLookup } from '../../src/store/webhooks.js';
import { Receiver } from '../support/receiver.js';

const receivers: Receiver[] = [];
after(async () => {
  for (const r of receivers) await r.close();
});

async function attempt(respond: Receiver['respond'] | 'closed', url?: (r: Receiver) => string) {
  const r = await new Receiver().start();
  receivers.push(r);
  if (respond === 'closed') await r.close();
  else r.respond = respond;
  return send(url ? url(r) : r.url, {}, '{}', { timeoutMs: 300, allowPrivate: true, keepBytes: 256 });
}

describe("an endpoint's last failure, in a few words", () => {
  it('names what real attempts met', async () => {
    assert.equal(failureReason(await attempt(() => ({ status: 500 }))), 'HTTP 500');
    assert.equal(failureReason(await attempt(() => 'hang')), 'timeout');
    assert.equal(failureReason(await attempt('closed')), 'connection refused');
    assert.equal(failureReason(await attempt(() => 'drop')), 'connection reset');
    const tls = failureReason(
      await attempt(
        () => ({ status: 200 }),
        (r) => r.url.replace('http:', 'https:'),
      ),
    );
    assert.match(tls, /^TLS: /);
    const guarded = await send('http://127.0.0.1:9/', {}, '{}', { timeoutMs: 300, allowPrivate: false });
    assert.equal(failureReason(guarded), 'refused: private address');
  });

  it('keeps the error of a failure without a code, and gives none to a delivered attempt', () => {
    const fail = (error: string) => failureReason({ status: null, error, retryAfterMs: null });
    assert.equal(fail('ENOTFOUND: getaddrinfo ENOTFOUND hooks.example'), 'name not found');
    assert.equal(fail('EWHATEVER: something new'), 'EWHATEVER');
    const secret = 'the endpoint secret is encrypted and WEBHOOK_SECRET_KEY is not set';
    assert.equal(fail(secret), secret);
    const config = loadConfig({});
    const at = Date.now();
    const d = { attempts: 0, windowFrom: at - 1000, eventSeq: 1n, endpointId: 'ep_x' } as DueDelivery;
    const busy = decideAttempt(d, { status: 503, error: null, retryAfterMs: config.webhookRetryWindowMs }, at, config);
    assert.deepEqual(
      [busy.outcome, busy.error, busy.reason],
      ['failed', 'HTTP 503: its Retry-After reaches past the retry window', 'HTTP 503'],
    );
    assert.equal(decideAttempt(d, { status: 204, error: null, retryAfterMs: null }, at, config).reason, null);
  });

  it("keeps the first bytes of an answer's body when asked", async () => {
    const long = await attempt(() => ({ status: 200, body: `${'é'.repeat(200)}` }));
    assert.equal(Buffer.byteLength(long.bodyStart!), 256);
    // Whole characters: a character the 256th byte cuts in two is left out, not shown as U+FFFD.
    const cut = await attempt(() => ({ status: 200, body: `a${'é'.repeat(200)}` }));
    assert.equal(cut.bodyStart, `a${'é'.repeat(127)}`);
    assert.equal((await attempt(() => ({ status: 200 }))).bodyStart, '');
    const quiet = await send(receivers[0]!.url, {}, '{}', { timeoutMs: 300, allowPrivate: true });
    assert.equal(quiet.bodyStart, undefined);
  });
});

describe('what webhook redeliver takes', () => {
  it('a delivery id (ep_…/msg_…) or a webhook-id (msg_…); a position, by its key', () => {
    assert.deepEqual(redeliveryTarget('msg_123'), { eventId: 'msg_123' });
    assert.deepEqual(redeliveryTarget('ep_AAAAAAAAAAAAAAAA/msg_1'), {
      endpointId: 'ep_AAAAAAAAAAAAAAAA',
      eventId: 'msg_1',
    });
    for (const text of [
      '',
      'msg_',
      'ep_AAAAAAAAAAAAAAAA',
      'ep_short/msg_1',
      'ep_AAAAAAAAAAAAAAAA/',
      'msg_1/x',
      `msg_${'a'.repeat(61)}`,
    ])
      assert.equal(redeliveryTarget(text), undefined, text);
    assert.deepEqual(eventLookup('msg_9223372036854775807'), { position: 9223372036854775807n });
    for (const id of ['msg_9223372036854775808', 'msg_0123', 'msg_abc']) assert.deepEqual(eventLookup(id), { id }, id);
  });
});
