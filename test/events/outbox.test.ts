// The outbox on each store, without a server: events are written with their change (only a
// real change), claims lease deliveries in order per plant, each endpoint's up to its own limit,
// and old finished events are pruned.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore, stores, suiteOptions } from '../support/stores.js';

for (const kind of stores) {
  describe(`the outbox on ${kind}`, suiteOptions(kind), () => {
    let store: Store;
    const db = createTestStore(kind);
    after(async () => {
      await store?.close();
      await db.drop();
    });

    const create = (id: bigint, name: string) => store.writePlant({ kind: 'create', plant: { id, name } });

    it('writes events with real changes only, leases them in order per plant, and prunes finished ones', async () => {
      store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 2 })).store;
      // No subscriber: nothing is written.
      await create(1n, 'before');
      await store.insertEndpoint({
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
      const replace = (id: bigint, name: string) => store.writePlant({ kind: 'replace', plant: { id, name } });
      assert.equal((await replace(2n, 'renamed')).kind, 'updated'); // not subscribed
      assert.equal((await replace(3n, 'none')).kind, 'not-found');
      assert.equal((await store.writePlant({ kind: 'delete', id: 2n })).kind, 'deleted');
      assert.equal((await store.writePlant({ kind: 'delete', id: 2n })).kind, 'not-found');
      await store.writePlants([
        { kind: 'create', plant: { id: 4n, name: 'four' } },
        { kind: 'create', plant: { id: 1n, name: 'before' } },
      ]);
      assert.equal(await store.countPendingDeliveries(), 3);

      const now = Date.now() + 1000;
      const first = await store.claimDeliveries(now, now + 60_000, new Map([['ep_a', 10]]));
      // Plant 2's deletion waits for its creation; plant 4 is independent.
      assert.deepEqual(
        first.map((d) => [d.type, d.body]),
        [
          ['plant.created', '{"id":2,"name":"two"}'],
          ['plant.created', '{"id":4,"name":"four"}'],
        ],
      );
      assert.deepEqual(
        await store.claimDeliveries(now, now + 60_000, new Map([['ep_a', 10]])),
        [],
        'leased: not claimed twice',
      );
      for (const d of first) {
        await store.recordAttempt({
          eventSeq: d.eventSeq,
          endpointId: d.endpointId,
          at: now,
          status: 200,
          error: null,
          outcome: 'delivered',
          nextAttemptAt: now,
          disableEndpoint: null,
        });
      }
      const next = await store.claimDeliveries(now, now + 60_000, new Map([['ep_a', 10]]));
      assert.deepEqual(
        next.map((d) => d.type),
        ['plant.deleted'],
      );
      assert.equal(await store.pruneEvents(now + 1), 2, 'the two delivered events; the leased one is pending');
      const [status] = await store.listEndpoints(5);
      assert.equal(status!.pending, 1);
      assert.equal(status!.delivered, 0);
    });

    it("claims each endpoint's deliveries up to its own limit; endpointsDue names those with any to claim", async () => {
      // Continues from the store above: ep_a (creations and deletions) has plant 2's deletion leased.
      const endpoint = (id: string, enabled = true) =>
        store.insertEndpoint({
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
        await store.writePlant({ kind: 'replace', plant: { id, name } });
      const now = Date.now() + 1000;
      const lease = now + 60_000;
      assert.deepEqual(await store.endpointsDue(now), { enabled: 3, due: ['ep_a', 'ep_b', 'ep_c'] });
      const claim = async (limits: Record<string, number>) =>
        (await store.claimDeliveries(now, lease, new Map(Object.entries(limits))))
          .map((d) => `${d.endpointId}:${d.plantId}`)
          .sort();
      assert.deepEqual(await claim({ ep_a: 10 }), ['ep_a:10', 'ep_a:11', 'ep_a:12', 'ep_a:13'], 'the creations');
      assert.deepEqual(await claim({ ep_b: 2 }), ['ep_b:10', 'ep_b:11']);
      assert.deepEqual(await claim({ ep_b: 10, ep_c: 1 }), ['ep_b:12', 'ep_b:13', 'ep_c:10']);
      // ep_b's only pending one left is plant 10's second change, behind its leased first.
      assert.deepEqual(await store.endpointsDue(now), { enabled: 3, due: ['ep_c'] });
      assert.deepEqual(await claim({ ep_b: 10, ep_a: 10 }), []);
      assert.deepEqual(await claim({ ep_c: 10 }), ['ep_c:11', 'ep_c:12', 'ep_c:13']);
      assert.deepEqual(await store.endpointsDue(now), { enabled: 3, due: [] });
    });
  });
}
