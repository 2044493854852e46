// The change log's promise under concurrency, on both stores: two instances (two stores open on
// one database, each with its own connections and batches) write at once, while a follower on
// each reads the log by position as it grows. No follower ever sees a position at or below one it
// already saw, no follower skips a change (a change that commits late with a lower position than
// one already read would be skipped for good: the naive sequence design, which this test fails),
// and the log holds exactly one change per write that changed something, whose replay gives the
// plants the store holds.
//
// Seeded: each writer draws its writes from a stream of its own, from TEST_SEED (printed in the
// suite's name, and in a failure's message), so a run's writes can be replayed; how they
// interleave is the machine's.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Change } from '../../src/domain/change.js';
import type { PlantWrite } from '../../src/domain/plant-write.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { prng, testSeed, withSeed } from '../support/seed.js';
import { createTestStore, postgresSql, stores, suiteOptions } from '../support/stores.js';

const SEED = testSeed();
const WRITES_PER_WRITER = 60;
const WRITERS_PER_INSTANCE = 8;
const IDS = 40;

/** A random write over a few ids: creations, renames, retags, deletions, and some that change nothing. */
function randomWrite(random: () => number): PlantWrite {
  const id = BigInt(1 + Math.floor(random() * IDS));
  const pick = random();
  if (pick < 0.35) return { kind: 'create', plant: { id, name: `p${id}` } };
  if (pick < 0.6) return { kind: 'patch', id, patch: { name: `n${Math.floor(random() * 3)}` } };
  if (pick < 0.8) return { kind: 'patch', id, patch: { tag: random() < 0.5 ? null : 't' } };
  return { kind: 'delete', id };
}

/** Reads the log from where it is until `stop`, checking each read against the last; resolves to all it saw. */
async function follow(store: Store, stop: () => boolean): Promise<Change[]> {
  const seen: Change[] = [];
  let last = (await store.changes.bounds()).floor - 1n;
  for (let done = false; !done;) {
    done = stop();
    // SQLite's reads resolve at once: without a turn of the event loop the writers would never run.
    await new Promise((resolve) => setImmediate(resolve));
    const { current } = await store.changes.bounds();
    for (let more = true; more;) {
      const { changes, scannedTo } = await store.changes.read(last, current, 1000, {});
      for (const c of changes) {
        assert.ok(c.position > last, `a follower saw ${c.position} after ${last}: the log went back`);
        last = c.position;
        seen.push(c);
      }
      last = scannedTo > last ? scannedTo : last;
      more = changes.length === 1000;
    }
  }
  return seen;
}

for (const kind of stores) {
  describe(
    `the change log under concurrent writers on two instances (seed ${SEED}) [${kind}]`,
    suiteOptions(kind),
    () => {
      const db = createTestStore(kind);
      const open: Store[] = [];
      after(async () => {
        for (const s of open) await s.close();
        await db.drop();
      });

      it('never goes back, skips nothing, and holds one change per effective write', () =>
        withSeed(SEED, async () => {
          for (let i = 0; i < 2; i++)
            open.push((await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 4 })).store);
          if (kind === 'postgres') {
            // Up to 4 ms between a transaction taking its positions and its commit, as a busy server
            // may take: without the log's lock, another instance's later positions commit first meanwhile.
            const schema = new URL(db.databaseUrl).searchParams.get('schema');
            await postgresSql(`
          CREATE FUNCTION ${schema}.jitter() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(random() * 0.004); RETURN NULL; END $$;
          CREATE TRIGGER jitter AFTER INSERT ON ${schema}.changes FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.jitter();`);
          }
          const [a, b] = open as [Store, Store];
          const start = await a.changes.bounds();
          let writing = true;
          const followers = [follow(a, () => !writing), follow(b, () => !writing)];
          let effective = 0;
          const writer = async (store: Store, random: () => number) => {
            for (let n = 0; n < WRITES_PER_WRITER; n++) {
              const outcome = await store.plants.write(randomWrite(random));
              if (['created', 'updated', 'deleted'].includes(outcome.kind)) effective++;
            }
          };
          await Promise.all(
            [a, b].flatMap((s, i) =>
              Array.from({ length: WRITERS_PER_INSTANCE }, (_, k) =>
                writer(s, prng(SEED + i * WRITERS_PER_INSTANCE + k)),
              ),
            ),
          );
          writing = false;
          const seen = await Promise.all(followers);

          const end = await a.changes.bounds();
          const log = (await a.changes.read(start.current, end.current, 1_000_000, {})).changes;
          assert.ok(effective > 100, `only ${effective} effective writes: the test proves little`);
          assert.equal(log.length, effective, 'one change per write that changed something, no more, no fewer');
          for (const [i, s] of seen.entries()) {
            const missed = log.filter((c) => !s.some((x) => x.position === c.position)).map((c) => c.position);
            assert.deepEqual(missed, [], `follower ${i} skipped changes that committed after it had read past them`);
            assert.equal(s.length, log.length);
          }
          // Replaying the log gives the store's plants.
          const replayed = new Map<bigint, string>();
          for (const c of log) {
            if (c.type === 'deleted') replayed.delete(c.id);
            else replayed.set(c.id, c.body);
          }
          const stored = await a.plants.list({}, 1000);
          assert.deepEqual(
            [...replayed].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, body]) => body),
            stored.map((p) =>
              JSON.stringify({ id: Number(p.id), name: p.name, ...(p.tag !== undefined && { tag: p.tag }) }),
            ),
          );
        }));

      it('a write that changes nothing answers a position at or past the change it waited for', async () => {
        const [a, b] = open as [Store, Store];
        for (let round = 0; round < 5; round++) {
          const plant = { id: BigInt(1000 + round), name: 'same' };
          const outcomes = await Promise.all(
            Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).plants.write({ kind: 'create', plant })),
          );
          const created = outcomes.filter((o) => o.kind === 'created');
          assert.equal(created.length, 1);
          const stale = outcomes.filter((o) => o.kind === 'unchanged' && o.position < created[0]!.position);
          assert.deepEqual(
            stale.map((o) => o.position),
            [],
            `retries answered before ${created[0]!.position}`,
          );
        }
      });
    },
  );
}
