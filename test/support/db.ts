import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { exportPlants } from '../../src/use-cases/export-import.js';
import { readJson } from '../../src/json/read-json.js';

export interface StoredPlant {
  id: bigint;
  name: string;
  tag: string | null;
}

/**
 * Every plant a store holds, ids as exact bigints, read the way `plant-store export` reads
 * them: the same on SQLite and PostgreSQL, and independent of the HTTP layer under test.
 */
export async function readStoredPlants(store: Store): Promise<StoredPlant[]> {
  const plants: StoredPlant[] = [];
  for await (const line of exportPlants(store)) {
    const p = readJson(line) as { id: number | bigint; name: string; tag?: string };
    plants.push({ id: BigInt(p.id), name: p.name, tag: p.tag ?? null });
  }
  return plants;
}

/** The same, from a store that a server process under test serves: opened here, read, closed. */
export async function readStoredPlantsAt(databaseUrl: string): Promise<StoredPlant[]> {
  const { store } = await openStore({ databaseUrl, databasePoolSize: 1 });
  try {
    return await readStoredPlants(store);
  } finally {
    await store.close();
  }
}
