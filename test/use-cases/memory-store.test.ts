// The memory store (support/memory-store.ts) answers as the SQLite store does: the same seeded
// random writes (single, batches all or nothing, imports) given to both, one after the other, get
// the same outcomes, leave the same plants, pages and searches, and the same change log (types,
// ids, bodies, tags; positions differ: each log counts its own). The use-case tests on it mean
// something only while this holds. TEST_SEED=<n> replays a run.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { PlantWrite, Written } from '../../src/domain/plant-write.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { MemoryStore } from '../support/memory-store.js';
import { prng, testSeed, withSeed } from '../support/seed.js';
import { createTestStore } from '../support/stores.js';

const SEED = testSeed();
const NAMES = ['Fern', 'Boston fern', 'Moss', 'Crème de menthe', 'fern moss'];
const TAGS = [undefined, 'a', 'b'];

function randomWrite(random: () => number): PlantWrite {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const id = BigInt(1 + Math.floor(random() * 12));
  const plant = { id, name: pick(NAMES), ...(pick(TAGS) !== undefined && { tag: pick(['a', 'b']) }) };
  const kind = random();
  if (kind < 0.35) return { kind: 'create', plant };
  if (kind < 0.55) return { kind: 'replace', plant };
  if (kind < 0.8)
    return { kind: 'patch', id, patch: random() < 0.5 ? { name: pick(NAMES) } : { tag: pick([null, 'a']) } };
  return { kind: 'delete', id };
}

/** What a write answered, without its position. */
const outcome = (w: Written) =>
  `${w.kind}${'plant' in w && w.plant ? ` ${JSON.stringify({ ...w.plant, id: String(w.plant.id) })}` : ''}`;

async function apply(store: Store, writes: PlantWrite[], how: number): Promise<string[]> {
  try {
    if (how === 0) return [outcome(await store.plants.write(writes[0]!))];
    if (how === 1) return (await store.plants.writeAll(writes)).map(outcome);
    return (await store.plants.writeBatch(writes)).map(outcome);
  } catch (err) {
    return [`refused ${(err as Error).name} ${(err as { index?: number }).index}`];
  }
}

async function state(store: Store) {
  const { floor, current } = await store.changes.bounds();
  const from = floor - 1n;
  const log = (await store.changes.read(from, current, 100_000, {})).changes.map((c) => [
    c.type,
    c.body,
    c.tag,
    c.oldTag,
  ]);
  const tagged = (await store.changes.read(from, current, 100_000, { tags: ['a'] })).changes.map((c) => c.body);
  const one = (await store.changes.read(from, current, 100_000, { id: 3n })).changes.map((c) => c.type);
  const plants = await store.plants.list({}, 1000);
  const page = await store.plants.list({ after: 4n, tags: ['a', 'b'] }, 3);
  const search = await store.plants.list({ search: ['fern'] }, 1000);
  return { log, tagged, one, plants, page, search, count: await store.plants.count() };
}

describe(`the memory store answers as the SQLite store (seed ${SEED})`, () => {
  const db = createTestStore('sqlite');
  let sqlite: Store | undefined;
  after(async () => {
    await sqlite?.close();
    await db.drop();
  });

  it('the same outcomes, plants, pages, searches and change log for the same writes', () =>
    withSeed(SEED, async () => {
      sqlite = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 })).store;
      const memory = new MemoryStore();
      const random = prng(SEED);
      for (let step = 0; step < 150; step++) {
        const how = Math.floor(random() * 3);
        const writes = Array.from({ length: how === 0 ? 1 : 1 + Math.floor(random() * 4) }, () => randomWrite(random));
        assert.deepEqual(await apply(memory, writes, how), await apply(sqlite, writes, how), `step ${step}`);
      }
      assert.deepEqual(await state(memory), await state(sqlite));
    }));
});
