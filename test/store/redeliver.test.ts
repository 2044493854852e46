// Steering deliveries in the store, the same cases on both stores, without a server: a failed
// attempt becomes its endpoint's last failure (which a backup does not carry); `redeliver` finds
// an event's deliveries by webhook-id (a new change's position, or an older event's own id) and
// puts the given-up ones of enabled endpoints back, due now with a new window and no attempts;
// the pending deliveries are counted per endpoint.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import type { AttemptResult, DueDelivery, WebhookEndpoint } from '../../src/domain/webhook.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import {
  createTestStore,
  postgresSql,
  stores,
  suiteOptions,
  type StoreKind,
  type TestStore,
} from '../support/stores.js';

/** One statement on the store's database, beside the store (what an older plant-store left). */
async function sql(kind: StoreKind, db: TestStore, text: string): Promise<void> {
  if (kind === 'postgres') {
    const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
    await postgresSql(`SET search_path = ${schema}; ${text}`);
    return;
  }
  const file = new Database(db.databaseUrl.slice('sqlite:'.length));
  try {
    file.exec(text);
  } finally {
    file.close();
  }
}

const endpoint = (id: string) => ({
  id,
  url: `http://127.0.0.1:9/${id}`,
  events: ['plant.created' as const],
  secret: 'whsec_AAAA',
  enabled: true,
  disabledReason: null,
  createdAt: new Date(),
});

const attempt = (d: DueDelivery, at: number, status: number): AttemptResult => {
  const ok = status < 300;
  return {
    eventSeq: d.eventSeq,
    endpointId: d.endpointId,
    at,
    status,
    error: ok ? null : `HTTP ${status}`,
    reason: ok ? null : `HTTP ${status}`,
    outcome: ok ? 'delivered' : 'failed',
    nextAttemptAt: at,
    disableEndpoint: null,
  };
};

for (const kind of stores) {
  describe(`steering deliveries [${kind}]`, suiteOptions(kind), () => {
    let store: Store;
    const db = createTestStore(kind);
    after(async () => {
      await store?.close();
      await db.drop();
    });
    const claim = (now: number, ids: string[]) =>
      store.webhooks.claimDeliveries(now, now + 60_000, new Map(ids.map((id) => [id, 10])));

    it("keeps an endpoint's last failure, and puts a given-up delivery back with its webhook-id", async () => {
      store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 2 })).store;
      await store.webhooks.insertEndpoint(endpoint('ep_x'));
      await store.webhooks.insertEndpoint(endpoint('ep_y'));
      const { position } = await store.plants.write({ kind: 'create', plant: { id: 1n, name: 'Fern' } });
      const eventId = `msg_${position}`;
      const t0 = Date.now() + 1000;
      const first = await claim(t0, ['ep_x', 'ep_y']);
      assert.deepEqual(first.map((d) => [d.endpointId, d.eventId, d.windowFrom === d.eventCreatedAt]).sort(), [
        ['ep_x', eventId, true],
        ['ep_y', eventId, true],
      ]);
      for (const d of first) await store.webhooks.recordAttempt(attempt(d, t0, d.endpointId === 'ep_x' ? 500 : 200));

      const listed = new Map((await store.webhooks.listEndpoints(0)).map((e) => [e.endpoint.id, e.lastFailure]));
      assert.deepEqual(listed.get('ep_x'), { reason: 'HTTP 500', at: new Date(t0) });
      assert.equal(listed.get('ep_y'), null, 'delivered: no failure');
      assert.deepEqual(
        await store.webhooks.pendingByEndpoint(),
        new Map([
          ['ep_x', 0],
          ['ep_y', 0],
        ]),
      );

      const t1 = t0 + 5000;
      assert.deepEqual(await store.webhooks.redeliver({ eventId: `msg_${position + 1000n}` }, t1), [], 'no such event');
      assert.deepEqual(await store.webhooks.redeliver({ eventId: 'msg_9223372036854775808' }, t1), [], 'past int64');
      const delivered = { endpointId: 'ep_y', eventId, state: 'delivered', endpointDisabled: null, queued: false };
      assert.deepEqual(await store.webhooks.redeliver({ eventId, endpointId: 'ep_y' }, t1), [delivered]);
      assert.deepEqual(await store.webhooks.redeliver({ eventId }, t1), [
        { endpointId: 'ep_x', eventId, state: 'failed', endpointDisabled: null, queued: true },
        delivered,
      ]);
      assert.deepEqual(
        await store.webhooks.pendingByEndpoint(),
        new Map([
          ['ep_x', 1],
          ['ep_y', 0],
        ]),
      );
      assert.deepEqual(
        (await store.webhooks.redeliver({ eventId, endpointId: 'ep_x' }, t1)).map((r) => [r.state, r.queued]),
        [['pending', false]],
        'queued already',
      );
      const [again, ...more] = await claim(t1, ['ep_x', 'ep_y']);
      assert.deepEqual(more, []);
      assert.deepEqual(
        [again!.endpointId, again!.eventId, again!.attempts, again!.windowFrom, again!.eventCreatedAt],
        ['ep_x', eventId, 0, t1, first[0]!.eventCreatedAt],
        'the same event, due now, its window from the redelivery, its attempts from none',
      );
    });

    it('finds an event from before the change log by its own id; sends nothing to a disabled endpoint', async () => {
      await store.webhooks.insertEndpoint(endpoint('ep_z'));
      const { position } = await store.plants.write({ kind: 'create', plant: { id: 2n, name: 'Cactus' } });
      const old = 'msg_LegacyRandomId0000000001';
      await sql(kind, db, `UPDATE changes SET id = '${old}' WHERE seq = ${position}`);
      const now = Date.now() + 10_000;
      for (const d of await claim(now, ['ep_x', 'ep_y', 'ep_z']))
        await store.webhooks.recordAttempt(attempt(d, now, 503));
      assert.deepEqual(
        await store.webhooks.redeliver({ eventId: `msg_${position}` }, now),
        [],
        'it has an id of its own',
      );
      await sql(kind, db, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone' WHERE id = 'ep_z'`);
      assert.deepEqual(
        (await store.webhooks.redeliver({ eventId: old }, now)).map((r) => [r.endpointId, r.eventId, r.queued]),
        [
          ['ep_x', old, true],
          ['ep_y', old, true],
          ['ep_z', old, false],
        ],
      );
      const [z] = await store.webhooks.redeliver({ eventId: old, endpointId: 'ep_z' }, now);
      assert.deepEqual([z!.state, z!.endpointDisabled, z!.queued], ['failed', 'gone', false]);
    });

    it('backs up endpoints without their last failure: a restored one has none', async () => {
      const target = createTestStore(kind);
      const restored = (await openStore({ databaseUrl: target.databaseUrl, databasePoolSize: 1 })).store;
      try {
        const snapshot = await store.openSnapshot();
        const endpoints: WebhookEndpoint[] = [];
        try {
          for await (const page of snapshot.records.webhooks.pages()) endpoints.push(...page);
        } finally {
          await snapshot.close();
        }
        assert.deepEqual(Object.keys(endpoints[0]!).sort(), Object.keys(endpoint('ep_x')).sort());
        await restored.restoreInto(async ({ records }) => ({ webhooks: await records.webhooks.insert(endpoints) }));
        const listed = await restored.webhooks.listEndpoints(0);
        assert.deepEqual(
          listed.map((e) => [e.endpoint.id, e.lastFailure]),
          [
            ['ep_x', null],
            ['ep_y', null],
            ['ep_z', null],
          ],
        );
      } finally {
        await restored.close();
        await target.drop();
      }
    });
  });
}
