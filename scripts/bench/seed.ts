import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createToken } from '../../src/use-cases/create-token.js';

/** Plant ids of a seeded store: spread out, so that random ids hit and miss like real traffic. */
export const seededId = (i: number) => BigInt(i) * 7919n;

/**
 * Fills a fresh store through its batch path (what `plant-store import` uses), not one HTTP
 * request per plant, and registers the benchmark's token.
 */
export async function seedStore(path: string, plants: number, token: string): Promise<void> {
  const store = new SqliteStore(path);
  await store.migrate();
  const batch = 10_000;
  for (let start = 0; start < plants; start += batch) {
    const n = Math.min(batch, plants - start);
    await store.writePlants(
      Array.from({ length: n }, (_, k) => ({
        kind: 'create' as const,
        plant: { id: seededId(start + k), name: `plant ${start + k}`, tag: 'seeded' },
      })),
    );
  }
  await createToken(store, { name: 'bench', value: token });
  await store.close();
}
