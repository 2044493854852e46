import type pg from 'pg';
import type { PlantRecord } from '../../src/domain/plant.js';
import { fillPlantWords } from '../../src/store/postgres/plant-words.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createToken } from '../../src/use-cases/create-token.js';

/** Plant ids of a seeded store: spread out, so that random ids hit and miss like real traffic. */
export const seededId = (i: number) => BigInt(i) * 7919n;

/** The tags and name words the filtered reads ask for: one plant in 10, and one in 10,000. */
export const FILTERED = { commonTag: 'shade', rareTag: 'epiphyte', commonWord: 'fern', rareWord: 'orchid' };

/**
 * One plant in this many is rare: one in 10,000, and still at least 25 in a small store, so that
 * a page of 20 rare plants is full on either store. (At least 2, as it was, gave the small store
 * pages of 2 against the large store's 20, and the ratio measured the page, not the store.)
 */
const rareEvery = (size: number) => Math.max(1, Math.min(10_000, Math.floor(size / 25)));

/** The i-th plant of a seeded store of `size` plants. */
export function seededPlant(i: number, size: number): PlantRecord {
  const rare = i % rareEvery(size) === rareEvery(size) - 1;
  const common = i % 10 === 3;
  const words = [common && FILTERED.commonWord, rare && FILTERED.rareWord].filter(Boolean).join(' ');
  const tag = rare ? FILTERED.rareTag : common ? FILTERED.commonTag : 'seeded';
  return { id: seededId(i), name: words ? `plant ${i} ${words}` : `plant ${i}`, tag };
}

/**
 * Fills a fresh store through its batch path, then settles it, as `plant-store import` does, not
 * one HTTP request per plant, and registers the benchmark's token.
 */
export async function seedStore(path: string, plants: number, token: string): Promise<void> {
  const store = new SqliteStore(path);
  await store.migrate();
  const batch = 10_000;
  for (let start = 0; start < plants; start += batch) {
    const n = Math.min(batch, plants - start);
    await store.plants.writeAll(
      Array.from({ length: n }, (_, k) => ({ kind: 'create' as const, plant: seededPlant(start + k, plants) })),
    );
  }
  await store.plants.settleAfterImport();
  await createToken(store, { name: 'bench', value: token });
  await store.close();
}

/**
 * Writes the words of the plants a PostgreSQL section put straight into `schema`'s plants table
 * (as the write path writes them with each plant), so that searches find them and renames and
 * deletes take words out as on a store the service filled.
 */
export async function seedPlantWords(admin: pg.Client, schema: string): Promise<void> {
  await admin.query(`SET search_path = ${schema}`);
  try {
    await fillPlantWords((query) => admin.query(query));
  } finally {
    await admin.query('RESET search_path');
  }
}

/**
 * Fills `schema` (made and migrated by a service started on it) with `size` seeded plants through
 * its plants table, then their words, then statistics: a store as the service would have filled it.
 */
export async function seedPostgresSchema(admin: pg.Client, schema: string, size: number): Promise<void> {
  const batch = 50_000;
  for (let start = 0; start < size; start += batch) {
    const plants = Array.from({ length: Math.min(batch, size - start) }, (_, k) => seededPlant(start + k, size));
    await admin.query({
      text: `INSERT INTO ${schema}.plants (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])`,
      values: [plants.map((p) => String(p.id)), plants.map((p) => p.name), plants.map((p) => p.tag)],
    });
  }
  await seedPlantWords(admin, schema);
  await admin.query(`VACUUM ANALYZE ${schema}.plants, ${schema}.plant_words`);
}
