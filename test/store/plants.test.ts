// The plants' contract, the same cases on both stores, without HTTP: the write path's creation,
// identical retry and conflict; replace, patch and delete with their outcomes; If-Match and
// If-None-Match; an event only for a real change; writes of one id in one batch seeing each
// other; concurrent writes sharing commits; a write that fails failing alone, and a batch of an
// import failing whole; reads by id, pages by id from a cursor, and the count. (The list's
// filters: plant-filters.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { etagOf, type PlantWrite } from '../../src/domain/plant-write.js';
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

const open = async (databaseUrl: string) => (await openStore({ databaseUrl, databasePoolSize: 4 })).store;

/**
 * Triggers that make a write fail, planted from outside the store: the insert of a plant named
 * `abort`, and the outbox event of a plant named `abort-event` (after its row was written).
 */
async function plantFailure(kind: StoreKind, databaseUrl: string): Promise<void> {
  if (kind === 'sqlite') {
    const db = new Database(databaseUrl.slice('sqlite:'.length));
    db.exec(`CREATE TRIGGER abort_insert BEFORE INSERT ON plants WHEN NEW.name = 'abort'
               BEGIN SELECT RAISE(ABORT, 'planted failure'); END;
             CREATE TRIGGER abort_event BEFORE INSERT ON changes WHEN NEW.body LIKE '%"abort-event"%'
               BEGIN SELECT RAISE(ABORT, 'planted failure'); END;`);
    db.close();
    return;
  }
  const schema = new URL(databaseUrl).searchParams.get('schema');
  await postgresSql(`
    CREATE FUNCTION ${schema}.abort_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.name = 'abort' THEN RAISE EXCEPTION 'planted failure'; END IF; RETURN NEW; END $$;
    CREATE TRIGGER abort_insert BEFORE INSERT ON ${schema}.plants FOR EACH ROW EXECUTE FUNCTION ${schema}.abort_insert();
    CREATE FUNCTION ${schema}.abort_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.body LIKE '%"abort-event"%' THEN RAISE EXCEPTION 'planted failure'; END IF; RETURN NEW; END $$;
    CREATE TRIGGER abort_event BEFORE INSERT ON ${schema}.changes FOR EACH ROW EXECUTE FUNCTION ${schema}.abort_event();`);
}

for (const kind of stores) {
  describe(`the plants [${kind}]`, suiteOptions(kind), () => {
    let db: TestStore;
    let store: Store;
    before(async () => {
      db = createTestStore(kind);
      store = await open(db.databaseUrl);
      await store.webhooks.insertEndpoint({
        id: 'ep_all',
        url: 'http://127.0.0.1:9/hook',
        events: ['plant.created', 'plant.updated', 'plant.deleted'],
        secret: 'whsec_AAAA',
        enabled: true,
        disabledReason: null,
        createdAt: new Date(),
      });
      await plantFailure(kind, db.databaseUrl);
    });
    after(async () => {
      await store?.close();
      await db?.drop();
    });

    /** The position of the last write's change in the change log (the current one when it changed nothing). */
    let position = 0n;
    const write = async (w: PlantWrite) => {
      const { position: at, ...outcome } = await store.plants.write(w);
      position = at;
      return outcome;
    };
    /** Events written since the last call (each pending delivery of the one endpoint is one event). */
    let seen = 0;
    async function newEvents(): Promise<number> {
      const now = await store.webhooks.countPendingDeliveries();
      const fresh = now - seen;
      seen = now;
      return fresh;
    }

    it('creates once: a new plant, an identical retry, a conflict; an event for the creation only', async () => {
      await newEvents();
      const plant = { id: 9_223_372_036_854_775_807n, name: 'Monstera', tag: '' };
      const before = (await store.changes.bounds()).current;
      assert.deepEqual(await write({ kind: 'create', plant }), { kind: 'created', plant });
      const created = position;
      assert.ok(created > before, 'the creation is a change past the last one');
      assert.deepEqual(await write({ kind: 'create', plant }), { kind: 'unchanged', plant });
      assert.equal(position, created, 'a retry changes nothing: it answers the current position');
      assert.deepEqual(await write({ kind: 'create', plant: { id: plant.id, name: 'Monstera' } }), {
        kind: 'conflict',
        existing: plant,
      });
      assert.equal(position, created);
      assert.equal(await newEvents(), 1);
      const { changes } = await store.changes.read(before, created, 10, {});
      assert.deepEqual(
        changes.map((c) => [c.position, c.type, c.json]),
        [[created, 'created', changes[0]!.json]],
      );
      assert.match(changes[0]!.json, /"plant":\{"id":9223372036854775807,"name":"Monstera","tag":""\}/);
      assert.deepEqual(await store.plants.get(plant.id), plant);
    });

    it('replaces, patches and deletes with their outcomes; unchanged content writes no event', async () => {
      await write({ kind: 'create', plant: { id: 10n, name: 'Fern', tag: 'green' } });
      await newEvents();
      assert.deepEqual(await write({ kind: 'replace', plant: { id: 10n, name: 'Fern', tag: 'green' } }), {
        kind: 'unchanged',
        plant: { id: 10n, name: 'Fern', tag: 'green' },
      });
      assert.equal(await newEvents(), 0);
      assert.deepEqual(await write({ kind: 'replace', plant: { id: 10n, name: 'Boston fern' } }), {
        kind: 'updated',
        plant: { id: 10n, name: 'Boston fern' },
      });
      assert.deepEqual(await write({ kind: 'patch', id: 10n, patch: { tag: 'indoor' } }), {
        kind: 'updated',
        plant: { id: 10n, name: 'Boston fern', tag: 'indoor' },
      });
      assert.deepEqual(await write({ kind: 'patch', id: 10n, patch: { tag: null } }), {
        kind: 'updated',
        plant: { id: 10n, name: 'Boston fern' },
      });
      assert.equal((await write({ kind: 'patch', id: 10n, patch: {} })).kind, 'unchanged');
      assert.equal(await newEvents(), 3);
      assert.deepEqual(await write({ kind: 'delete', id: 10n }), {
        kind: 'deleted',
        plant: { id: 10n, name: 'Boston fern' },
      });
      for (const w of [
        { kind: 'delete', id: 10n },
        { kind: 'replace', plant: { id: 10n, name: 'x' } },
        { kind: 'patch', id: 10n, patch: { name: 'x' } },
      ] as PlantWrite[]) {
        assert.deepEqual(await write(w), { kind: 'not-found' });
      }
      assert.equal(await newEvents(), 1);
      assert.equal(await store.plants.get(10n), undefined);
    });

    it('holds If-Match: the current ETag or *, else precondition-failed and nothing changes', async () => {
      const plant = { id: 20n, name: 'Cactus' };
      await write({ kind: 'create', plant });
      const etag = etagOf(plant);
      const stale = etagOf({ id: 20n, name: 'Old cactus' });
      const replace = { kind: 'replace', plant: { id: 20n, name: 'Tall cactus' } } as const;
      assert.deepEqual(await write({ ...replace, conditions: { ifMatch: [stale] } }), {
        kind: 'precondition-failed',
        current: plant,
        failed: 'If-Match',
      });
      assert.equal(
        (await write({ kind: 'delete', id: 20n, conditions: { ifMatch: [stale] } })).kind,
        'precondition-failed',
      );
      assert.deepEqual(await store.plants.get(20n), plant);
      const patch = { kind: 'patch', id: 20n, patch: { name: 'Tall cactus' } } as const;
      const updated = await write({ ...patch, conditions: { ifMatch: [stale, etag] } });
      assert.equal(updated.kind, 'updated');
      assert.equal((await write({ kind: 'delete', id: 20n, conditions: { ifMatch: '*' } })).kind, 'deleted');
      // Gone: without its conditions the delete would be not-found, so they are not evaluated (RFC 9110 13.2.1).
      assert.deepEqual(await write({ kind: 'delete', id: 20n, conditions: { ifMatch: '*' } }), { kind: 'not-found' });
    });

    it('holds If-None-Match: fails on the current ETag or *, after If-Match, and nothing changes', async () => {
      const plant = { id: 21n, name: 'Aloe' };
      await write({ kind: 'create', plant });
      const etag = etagOf(plant);
      const other = etagOf({ id: 21n, name: 'Other' });
      for (const ifNoneMatch of ['*', [etag], [other, etag]] as const) {
        for (const w of [
          { kind: 'replace', plant: { id: 21n, name: 'Aloe vera' } },
          { kind: 'patch', id: 21n, patch: { tag: 'x' } },
          { kind: 'delete', id: 21n },
        ] as const) {
          assert.deepEqual(await write({ ...w, conditions: { ifNoneMatch: ifNoneMatch as '*' | string[] } }), {
            kind: 'precondition-failed',
            current: plant,
            failed: 'If-None-Match',
          });
        }
      }
      assert.deepEqual(await store.plants.get(21n), plant);
      const both = await write({ kind: 'delete', id: 21n, conditions: { ifMatch: [other], ifNoneMatch: '*' } });
      assert.equal(both.kind === 'precondition-failed' && both.failed, 'If-Match', 'If-Match is evaluated first');
      const renamed = await write({
        kind: 'replace',
        plant: { id: 21n, name: 'Aloe vera' },
        conditions: { ifMatch: [etag], ifNoneMatch: [other] },
      });
      assert.equal(renamed.kind, 'updated');
      assert.deepEqual(await write({ kind: 'delete', id: 22n, conditions: { ifNoneMatch: [other] } }), {
        kind: 'not-found',
      });
    });

    it('lets writes of one id in one batch see each other, in order', async () => {
      const outcomes = await store.plants.writeAll([
        { kind: 'create', plant: { id: 30n, name: 'a' } },
        { kind: 'create', plant: { id: 30n, name: 'a' } },
        { kind: 'create', plant: { id: 30n, name: 'b' } },
        { kind: 'replace', plant: { id: 30n, name: 'c' } },
        { kind: 'delete', id: 30n },
        { kind: 'create', plant: { id: 30n, name: 'd' } },
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.kind),
        ['created', 'unchanged', 'conflict', 'updated', 'deleted', 'created'],
      );
      assert.deepEqual(await store.plants.get(30n), { id: 30n, name: 'd' });
    });

    it('creates many at once (a batch, an import): each free id once, a taken one decided against its plant', async () => {
      const taken = { id: 1_000_050n, name: 'Taken fern' };
      assert.equal((await write({ kind: 'create', plant: taken })).kind, 'created');
      const same = { id: 1_000_070n, name: 'Same moss' };
      assert.equal((await write({ kind: 'create', plant: same })).kind, 'created');
      // Past the count from which the stores insert many rows a statement, in an order not by id.
      const plants = Array.from({ length: 250 }, (_, i) => ({ id: 1_000_249n - BigInt(i), name: `Ivy ${i}` }));
      plants[179] = { ...same }; // id 1,000,070, as stored: an identical retry
      const outcomes = await store.plants.writeAll(plants.map((plant) => ({ kind: 'create', plant })));
      const kinds = outcomes.map((o) => o.kind);
      assert.equal(kinds.filter((k) => k === 'created').length, 248);
      assert.equal(kinds[179], 'unchanged');
      assert.deepEqual(outcomes[199], { kind: 'conflict', existing: taken, position: outcomes[199]!.position });
      assert.deepEqual(await store.plants.get(1_000_050n), taken);
      assert.deepEqual(await store.plants.get(1_000_001n), { id: 1_000_001n, name: 'Ivy 248' });
      const found = await store.plants.list({ search: ['ivy'] }, 1000);
      const mine = found.filter((p) => p.id >= 1_000_000n && p.id < 1_000_250n);
      assert.equal(
        mine.length,
        248,
        JSON.stringify(mine.filter((p) => !p.name.startsWith('Ivy')).map((p) => [String(p.id), p.name])),
      );
    });

    it('creates an id once under concurrent creations, on one store object or two (two instances)', async () => {
      const other = await open(db.databaseUrl);
      try {
        for (let round = 0; round < 5; round++) {
          const id = 40n + BigInt(round);
          const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
          const outcomes = await Promise.all(
            names.map((name, i) => (i % 2 ? other : store).plants.write({ kind: 'create', plant: { id, name } })),
          );
          const created = outcomes.filter((o) => o.kind === 'created');
          assert.equal(
            created.length,
            1,
            JSON.stringify(outcomes, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
          );
          assert.equal(outcomes.filter((o) => o.kind === 'conflict').length, names.length - 1);
          assert.deepEqual(await store.plants.get(id), (created[0] as { plant: unknown }).plant);
        }
      } finally {
        await other.close();
      }
    });

    it('answers concurrent reads by id each with its own plant: found, missing, one id twice', async () => {
      const plants = Array.from({ length: 20 }, (_, i) => ({ id: 5000n + BigInt(i), name: `r${i}`, tag: `t${i % 3}` }));
      await Promise.all(plants.map((plant) => store.plants.write({ kind: 'create', plant })));
      const ids = [...plants.map((p) => p.id), 5003n, 6000n, -5000n, 8_000_000_000_000_000_000n, 5000n];
      const read = await Promise.all(ids.map((id) => store.plants.get(id)));
      assert.deepEqual(read, [...plants, plants[3], undefined, undefined, undefined, plants[0]]);
      // A read sent after a write was acknowledged sees it, whatever reads it came with.
      const [, renamed] = await Promise.all([
        store.plants.get(5001n),
        store.plants
          .write({ kind: 'replace', plant: { id: 5001n, name: 'renamed' } })
          .then(() => store.plants.get(5001n)),
      ]);
      assert.deepEqual(renamed, { id: 5001n, name: 'renamed' });
    });

    it('gives concurrent writes few commits, and fails a failing write alone', async () => {
      const before = store.writeStats();
      const writes = Array.from({ length: 200 }, (_, i) =>
        write({ kind: 'create', plant: { id: 1000n + BigInt(i), name: i === 57 ? 'abort' : `p${i}` } }),
      );
      const settled = await Promise.allSettled(writes);
      const after = store.writeStats();
      assert.equal(settled.filter((s) => s.status === 'rejected').length, 1, 'only the planted failure');
      assert.equal(settled[57]!.status, 'rejected');
      // SQLite: one transaction and one fsync for all of them; PostgreSQL: a few batches, and the
      // failed one split in halves down to the failing write (about 2 log2(n) transactions).
      const commits = after.commits - before.commits;
      assert.ok(commits <= (kind === 'sqlite' ? 2 : 20), `${commits} commits for 200 writes`);
      assert.equal(after.writes - before.writes, 199);
      assert.equal(await store.plants.get(1057n), undefined);
      assert.deepEqual(await store.plants.get(1058n), { id: 1058n, name: 'p58' });
      // The store goes on writing.
      assert.equal((await write({ kind: 'create', plant: { id: 1057n, name: 'fine' } })).kind, 'created');
    });

    it('leaves nothing of a write that failed after its row was written (the outbox failed)', async () => {
      const settled = await Promise.allSettled([
        write({ kind: 'create', plant: { id: 2000n, name: 'before' } }),
        write({ kind: 'create', plant: { id: 2001n, name: 'abort-event' } }),
        write({ kind: 'create', plant: { id: 2002n, name: 'after' } }),
      ]);
      assert.deepEqual(
        settled.map((s) => s.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal(await store.plants.get(2001n), undefined, 'the plant went with its failed event');
      assert.deepEqual(await store.plants.get(2002n), { id: 2002n, name: 'after' });
    });

    it('writes the writes of an import all together or not at all', async () => {
      const batch = [3000n, 3001n, 3002n].map((id) => ({
        kind: 'create' as const,
        plant: { id, name: id === 3001n ? 'abort' : `i${id}` },
      }));
      await assert.rejects(store.plants.writeAll(batch));
      for (const id of [3000n, 3001n, 3002n]) assert.equal(await store.plants.get(id), undefined);
      batch[1]!.plant.name = 'fine';
      assert.deepEqual(
        (await store.plants.writeAll(batch)).map((o) => o.kind),
        ['created', 'created', 'created'],
      );
    });

    it('lists plants by id from a cursor, a page at a time, and counts them', async () => {
      const all = await store.plants.list({}, 10_000);
      assert.deepEqual(
        all.map((p) => p.id),
        [...all.map((p) => p.id)].sort((a, b) => (a < b ? -1 : 1)),
        'by id ascending',
      );
      assert.equal(await store.plants.count(), all.length);
      const paged = [];
      for (let after: bigint | undefined, n = 0; n < 1000; n++) {
        const page = await store.plants.list({ after }, 7);
        paged.push(...page);
        if (page.length < 7) break;
        after = page.at(-1)!.id;
      }
      assert.deepEqual(paged, all);
      assert.deepEqual(await store.plants.list({ after: 2n ** 63n - 1n }, 10), []);
    });
  });
}
