// The webhooks' contract, the same cases on both stores, without a server: deliveries are written
// with their change (only a real change, only for a subscriber), claims lease deliveries in order
// per plant, each endpoint's up to its own limit, and the change log's pruning keeps what a
// delivery still waits for; endpoints are listed oldest first with
// their figures, a disabled one gives up its pending deliveries and gets no more, and a removed
// one takes its deliveries with it.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore, stores, suiteOptions } from '../support/stores.js';

for (const kind of stores) {
  describe(`the webhooks [${kind}]`, suiteOptions(kind), () => {
    let store: Store;
    const db = createTestStore(kind);
    after(async () => {
      await store?.close();
      await db.drop();
    });

    const create = (id: bigint, name: string) => store.plants.write({ kind: 'create', plant: { id, name } });

    it('writes events with real changes only, leases them in order per plant, and prunes finished ones', async () => {
      store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 2 })).store;
      // No subscriber: nothing to deliver (the change is logged all the same).
      await create(1n, 'before');
      await store.webhooks.insertEndpoint({
        id: 'ep_a',
        url: 'http://127.0.0.1:9/hook',
        events: ['plant.created', 'plant.deleted'],
        secret: 'whsec_AAAA',
        enabled: true,
        disabledReason: null,
        createdAt: new Date(),
      });
      assert.equal((await create(2n, 'two')).kind, 'created');
      assert.equal((await create(2n, 'two')).kind, 'unchanged');
      assert.equal((await create(2n, 'other')).kind, 'conflict');
      const replace = (id: bigint, name: string) => store.plants.write({ kind: 'replace', plant: { id, name } });
      assert.equal((await replace(2n, 'renamed')).kind, 'updated'); // not subscribed
      assert.equal((await replace(3n, 'none')).kind, 'not-found');
      assert.equal((await store.plants.write({ kind: 'delete', id: 2n })).kind, 'deleted');
      assert.equal((await store.plants.write({ kind: 'delete', id: 2n })).kind, 'not-found');
      await store.plants.writeAll([
        { kind: 'create', plant: { id: 4n, name: 'four' } },
        { kind: 'create', plant: { id: 1n, name: 'before' } },
      ]);
      assert.equal(await store.webhooks.countPendingDeliveries(), 3);

      const now = Date.now() + 1000;
      const first = await store.webhooks.claimDeliveries(now, now + 60_000, new Map([['ep_a', 10]]));
      // Plant 2's deletion waits for its creation; plant 4 is independent.
      assert.deepEqual(
        first.map((d) => [d.type, d.body]),
        [
          ['plant.created', '{"id":2,"name":"two"}'],
          ['plant.created', '{"id":4,"name":"four"}'],
        ],
      );
      assert.deepEqual(
        await store.webhooks.claimDeliveries(now, now + 60_000, new Map([['ep_a', 10]])),
        [],
        'leased: not claimed twice',
      );
      for (const d of first) {
        await store.webhooks.recordAttempt({
          eventSeq: d.eventSeq,
          endpointId: d.endpointId,
          at: now,
          status: 200,
          error: null,
          reason: null,
          outcome: 'delivered',
          nextAttemptAt: now,
          disableEndpoint: null,
        });
      }
      const next = await store.webhooks.claimDeliveries(now, now + 60_000, new Map([['ep_a', 10]]));
      assert.deepEqual(
        next.map((d) => d.type),
        ['plant.deleted'],
      );
      assert.equal(
        await store.changes.prune(now + 1),
        4,
        'every change but the deletion whose delivery is leased: the creations of 1, 2 and 4, the rename of 2',
      );
      const bounds = await store.changes.bounds();
      assert.equal((await store.changes.read(bounds.floor - 1n, bounds.current, 10, {})).changes.length, 0);
      const [status] = await store.webhooks.listEndpoints(5);
      assert.equal(status!.pending, 1);
      assert.equal(status!.delivered, 0);
    });

    it("claims each endpoint's deliveries up to its own limit; endpointsDue names those with any to claim", async () => {
      // Continues from the store above: ep_a (creations and deletions) has plant 2's deletion leased.
      const endpoint = (id: string, enabled = true) =>
        store.webhooks.insertEndpoint({
          id,
          url: `http://127.0.0.1:9/${id}`,
          events: ['plant.updated'],
          secret: 'whsec_AAAA',
          enabled,
          disabledReason: null,
          createdAt: new Date(),
        });
      await endpoint('ep_b');
      await endpoint('ep_c');
      for (const id of [10n, 11n, 12n, 13n]) await create(id, 'x');
      // Plant 10 changes twice: its second event waits for its first.
      for (const [id, name] of [
        [10n, 'y'],
        [10n, 'z'],
        [11n, 'y'],
        [12n, 'y'],
        [13n, 'y'],
      ] as const)
        await store.plants.write({ kind: 'replace', plant: { id, name } });
      const now = Date.now() + 1000;
      const lease = now + 60_000;
      assert.deepEqual(await store.webhooks.endpointsDue(now), { enabled: 3, due: ['ep_a', 'ep_b', 'ep_c'] });
      const claim = async (limits: Record<string, number>) =>
        (await store.webhooks.claimDeliveries(now, lease, new Map(Object.entries(limits))))
          .map((d) => `${d.endpointId}:${d.plantId}`)
          .sort();
      assert.deepEqual(await claim({ ep_a: 10 }), ['ep_a:10', 'ep_a:11', 'ep_a:12', 'ep_a:13'], 'the creations');
      assert.deepEqual(await claim({ ep_b: 2 }), ['ep_b:10', 'ep_b:11']);
      assert.deepEqual(await claim({ ep_b: 10, ep_c: 1 }), ['ep_b:12', 'ep_b:13', 'ep_c:10']);
      // ep_b's only pending one left is plant 10's second change, behind its leased first.
      assert.deepEqual(await store.webhooks.endpointsDue(now), { enabled: 3, due: ['ep_c'] });
      assert.deepEqual(await claim({ ep_b: 10, ep_a: 10 }), []);
      assert.deepEqual(await claim({ ep_c: 10 }), ['ep_c:11', 'ep_c:12', 'ep_c:13']);
      assert.deepEqual(await store.webhooks.endpointsDue(now), { enabled: 3, due: [] });
    });

    it('disables an endpoint, giving up its pending deliveries, and removes one with its deliveries', async () => {
      await store.webhooks.insertEndpoint({
        id: 'ep_d',
        url: 'http://127.0.0.1:9/ep_d',
        events: ['plant.deleted'],
        secret: 'whsec_AAAA',
        enabled: true,
        disabledReason: null,
        createdAt: new Date(),
      });
      for (const id of [50n, 51n]) {
        await create(id, 'x');
        await store.plants.write({ kind: 'delete', id });
      }
      const now = Date.now() + 1000;
      const [first, ...more] = await store.webhooks.claimDeliveries(now, now + 60_000, new Map([['ep_d', 1]]));
      assert.deepEqual(more, []);
      await store.webhooks.recordAttempt({
        eventSeq: first!.eventSeq,
        endpointId: 'ep_d',
        at: now,
        status: 410,
        error: 'HTTP 410',
        reason: 'HTTP 410',
        outcome: 'failed',
        nextAttemptAt: now,
        disableEndpoint: 'the endpoint answered 410 Gone',
      });
      const listed = await store.webhooks.listEndpoints(5);
      assert.deepEqual(
        listed.map((e) => e.endpoint.id),
        ['ep_a', 'ep_b', 'ep_c', 'ep_d'],
        'oldest first',
      );
      const d = listed.at(-1)!;
      assert.deepEqual(
        [d.endpoint.enabled, d.endpoint.disabledReason, d.pending, d.failed],
        [false, 'the endpoint answered 410 Gone', 0, 2],
      );
      assert.deepEqual(
        d.lastFailure,
        { reason: 'HTTP 410', at: new Date(now) },
        "the failed attempt's reason and time",
      );
      assert.equal(listed[0]!.lastFailure, null, 'ep_a has had no failure');
      assert.deepEqual(
        d.recent.map((r) => [r.state, r.status]),
        [['failed', 410]],
        'the attempt made; the one given up was never attempted',
      );
      assert.equal((await store.webhooks.endpointsDue(now)).enabled, 3);
      await create(52n, 'x');
      await store.plants.write({ kind: 'delete', id: 52n });
      assert.equal((await store.webhooks.listEndpoints(0)).at(-1)!.pending, 0, 'no delivery for a disabled endpoint');

      const pending = await store.webhooks.countPendingDeliveries();
      assert.equal(await store.webhooks.removeEndpoint('ep_a'), true);
      assert.equal(await store.webhooks.removeEndpoint('ep_a'), false);
      assert.deepEqual(
        (await store.webhooks.listEndpoints(0)).map((e) => e.endpoint.id),
        ['ep_b', 'ep_c', 'ep_d'],
      );
      assert.ok((await store.webhooks.countPendingDeliveries()) < pending, "ep_a's pending deliveries went with it");
    });
  });
}
