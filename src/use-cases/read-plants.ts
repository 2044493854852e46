import { plantNotFound } from '../domain/errors.js';
import type { PlantRecord } from '../domain/plant.js';
import type { Store } from '../store/store.js';

export interface PlantPage {
  plants: PlantRecord[];
  /** The cursor of the next page, when more plants follow. */
  nextAfter: bigint | undefined;
}

/** One page of plants by id. One extra row is read to know whether another page follows. */
export async function listPlants(store: Store, query: { limit: number; after?: bigint }): Promise<PlantPage> {
  const rows = await store.listPlants({ after: query.after }, query.limit + 1);
  const plants = rows.slice(0, query.limit);
  return { plants, nextAfter: rows.length > query.limit ? plants.at(-1)!.id : undefined };
}

export async function getPlant(store: Store, id: bigint): Promise<PlantRecord> {
  const plant = await store.getPlant(id);
  if (!plant) throw plantNotFound(id);
  return plant;
}
