// A subscriber's Retry-After is read within bounds: one that reaches past the retry window gives
// the delivery up at once (recorded, so the plant's next events go on), one that is not a delay
// or a date is ignored. And a delivery whose attempt cannot be recorded is never sent again past
// its window.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/config.js';
import type { EndpointStatus } from '../../src/domain/webhook.js';
import { openStore } from '../../src/store/open-store.js';
import { addWebhook } from '../../src/use-cases/webhooks.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant, send } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { FAST_WEBHOOKS, Receiver, type Received } from '../support/receiver.js';
import { createTestStore, stores, suiteOptions } from '../support/stores.js';

const FAST = { ...FAST_WEBHOOKS, WEBHOOK_TIMEOUT_MS: '1000' };

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function subscriber(respond: Receiver['respond']): Promise<Receiver> {
  const r = await new Receiver().start();
  r.respond = respond;
  cleanups.push(() => r.close());
  return r;
}

const rename = (s: TestApp, id: number, name: string) =>
  send(s, {
    method: 'PUT',
    path: `/plants/${id}`,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });

const plantOf = (r: Received) => (JSON.parse(r.body) as { id: number }).id;
const typeOf = (r: Received) => r.headers['webhook-event-type'];

/** Retry-After values past any window: each gives its delivery up after one attempt. */
const PAST_THE_WINDOW = ['99999999999999999999', '9'.repeat(400), 'Fri, 31 Dec 9999 23:59:59 GMT', '86401'];
/** Values that ask for no wait, or are not a delay or a date: the delivery is retried soon. */
const SOON = ['0', '-5', '1.5', 'soon', '1e3', 'Thu, 01 Jan 1970 00:00:00 GMT', ''];

for (const kind of stores) {
  describe(`a subscriber's Retry-After on ${kind}`, suiteOptions(kind), () => {
    it('past the retry window: given up at once and recorded; the plant goes on', async () => {
      const values = [...PAST_THE_WINDOW, ...SOON];
      // A plant's creation is answered 503 with its value the first time; everything else 200.
      const seen = new Set<number>();
      const hook = await subscriber((r) => {
        const plant = plantOf(r);
        if (typeOf(r) !== 'plant.created' || seen.has(plant)) return { status: 200 };
        seen.add(plant);
        return { status: 503, headers: { 'retry-after': values[plant - 1]! } };
      });
      const store = createTestStore(kind);
      cleanups.push(() => store.drop());
      const env = { ...FAST, WEBHOOK_RETRY_WINDOW: '24h' };
      const s = await buildTestApp({ databaseUrl: store.databaseUrl, env, logs: true });
      cleanups.push(() => s.close());
      await addWebhook(s.services.store, loadConfig({ DATABASE_URL: store.databaseUrl, ...env }), hook.url, [
        'plant.created',
        'plant.updated',
      ]);
      for (const [i] of values.entries()) {
        assert.equal((await postPlant(s, s.token, `{"id":${i + 1},"name":"p${i + 1}"}`)).status, 200);
        assert.equal((await rename(s, i + 1, `renamed ${i + 1}`)).status, 200);
      }
      const updated = () =>
        new Set(
          hook
            .accepted()
            .filter((r) => typeOf(r) === 'plant.updated')
            .map(plantOf),
        );
      assert.ok(
        await pollUntil(async () => updated().size === values.length, 15_000),
        `updates delivered to ${[...updated()].join(', ')} of 1-${values.length}\n${s.logs.filter((l) => l.includes('webhook')).join('\n')}`,
      );
      const created = (plant: number) =>
        hook.requests.filter((r) => typeOf(r) === 'plant.created' && plantOf(r) === plant);
      for (const [i, value] of values.entries()) {
        const attempts = created(i + 1).length;
        if (PAST_THE_WINDOW.includes(value)) assert.equal(attempts, 1, `Retry-After: ${value.slice(0, 40)}`);
        else assert.equal(attempts, 2, `Retry-After: "${value}" is retried`);
      }
      // The last answers are in; their outcomes are recorded a moment later.
      let status: EndpointStatus | undefined;
      await pollUntil(async () => {
        [status] = await s.services.store.webhooks.listEndpoints(50);
        return status?.pending === 0;
      }, 5000);
      assert.equal(status!.failed, PAST_THE_WINDOW.length);
      assert.equal(status!.pending, 0);
      const givenUp = status!.recent.filter((r) => r.state === 'failed');
      for (const r of givenUp) assert.match(r.error ?? '', /^HTTP 503: its Retry-After reaches past the retry window/);
    });
  });
}

describe('an attempt that cannot be recorded', () => {
  it('is not sent again once its retry window has ended', async () => {
    const hook = await subscriber(() => ({ status: 500 }));
    const db = createTestStore('sqlite');
    cleanups.push(() => db.drop());
    const { store } = await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 });
    cleanups.push(() => store.close());
    // Every record fails, as on a store error: the lease (time-out + 5 s) runs out each time.
    const refusals: number[] = [];
    store.webhooks.recordAttempt = async () => {
      refusals.push(Date.now());
      throw new Error('disk I/O error');
    };
    const env = { ...FAST, WEBHOOK_RETRY_WINDOW: '1s', WEBHOOK_TIMEOUT_MS: '500' };
    const s = await buildTestApp({ databaseUrl: db.databaseUrl, storeObject: store, env, logs: true });
    cleanups.push(() => s.close());
    await addWebhook(store, loadConfig({ DATABASE_URL: db.databaseUrl, ...env }), hook.url, ['plant.created']);
    assert.equal((await postPlant(s, s.token, '{"id":1,"name":"a"}')).status, 200);
    assert.ok(await pollUntil(async () => hook.requests.length >= 1, 5_000), 'the first attempt');
    const first = Date.now();
    // The lease (5.5 s) runs out and the delivery is claimed again, the window (1 s) long over.
    assert.ok(
      await pollUntil(async () => refusals.some((t) => t > first + 5_000), 10_000),
      `claimed again after its lease\n${s.logs.join('\n')}`,
    );
    assert.equal(hook.requests.length, 1, 'sent once, within its window, never after it');
    assert.ok(s.logs.some((l) => l.includes('could not record a webhook attempt')));
  });
});
