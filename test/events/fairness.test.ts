// Deliveries to one subscriber cannot starve another: a subscriber that accepts connections and
// never answers holds at most its share of the delivery slots, so a healthy one is served as fast
// as it would be alone.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/config.js';
import { importPlants } from '../../src/use-cases/export-import.js';
import { addWebhook } from '../../src/use-cases/webhooks.js';
import { buildTestApp } from '../helper.js';
import { pollUntil } from '../support/poll.js';
import { Receiver } from '../support/receiver.js';
import { createTestStore, stores, suiteOptions } from '../support/stores.js';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const EVENTS = 120;

for (const kind of stores) {
  describe(`webhook fairness on ${kind}`, suiteOptions(kind), () => {
    it('a subscriber that never answers does not hold up a healthy one', async () => {
      const hung = await new Receiver().start();
      hung.respond = () => 'hang';
      const healthy = await new Receiver().start();
      cleanups.push(
        () => hung.close(),
        () => healthy.close(),
      );
      const store = createTestStore(kind);
      cleanups.push(() => store.drop());
      // The hung subscriber's attempts last 20 s: with shared slots the healthy one would wait
      // that long for most of its events. Alone, it gets all of them in a second or two.
      const env = {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_TIMEOUT_MS: '20000',
        WEBHOOK_CONCURRENCY: '16',
        WEBHOOK_POLL_INTERVAL_MS: '50',
      };
      const s = await buildTestApp({ databaseUrl: store.databaseUrl, env });
      cleanups.push(() => s.close());
      const config = loadConfig({ DATABASE_URL: store.databaseUrl, ...env });
      // The hung one first: its deliveries come first in every claim. It takes creations only.
      await addWebhook(s.services.store, config, hung.url, ['plant.created']);
      await addWebhook(s.services.store, config, healthy.url, ['plant.created', 'plant.updated']);
      const ids = Array.from({ length: EVENTS }, (_, i) => i + 1);
      const got = (type: string) => healthy.accepted().filter((r) => r.headers['webhook-event-type'] === type);

      // Both have work at once (the finding): the healthy one is served as if alone.
      let started = Date.now();
      await importPlants(
        s.services.store,
        s.services.doc,
        ids.map((id) => `{"id":${id},"name":"p${id}"}`),
      );
      let all = await pollUntil(async () => got('plant.created').length >= EVENTS, 12_000);
      let took = Date.now() - started;
      assert.ok(all, `the healthy subscriber had ${got('plant.created').length} of ${EVENTS} after ${took} ms`);
      // Generous for a busy 2-core machine; shared slots keep it waiting for the 20 s time-outs.
      assert.ok(took < 10_000, `the healthy subscriber's ${EVENTS} events took ${took} ms`);

      // Then only the hung one has work, and takes what slots it may; the healthy one's next
      // events find slots free at once rather than after the hung one's time-outs.
      await new Promise((r) => setTimeout(r, 300));
      started = Date.now();
      await s.services.store.plants.writeAll(
        ids.map((id) => ({ kind: 'replace', plant: { id: BigInt(id), name: `q${id}` } })),
      );
      s.services.dispatcher.nudge();
      all = await pollUntil(async () => got('plant.updated').length >= EVENTS, 12_000);
      took = Date.now() - started;
      assert.ok(all, `the healthy subscriber had ${got('plant.updated').length} of ${EVENTS} updates after ${took} ms`);
      assert.ok(took < 10_000, `the healthy subscriber's ${EVENTS} updates took ${took} ms`);
      assert.equal(new Set(healthy.accepted().map((r) => r.body)).size, 2 * EVENTS, 'each event once');
      // The hung one holds no more than its share: half the slots, the other half kept for the other.
      assert.ok(hung.requests.length <= 8, `the hung subscriber holds ${hung.requests.length} slots`);
    });
  });
}
