import { HttpError } from '../http/http-error.js';
import type { PlantRecord, Store } from '../store/store.js';

/** The request body of creation, as validated against NewPlant: id is exact (number or bigint). */
export interface NewPlantInput {
  id: number | bigint;
  name: string;
  tag?: string;
}

/** What the seed answers with: a Plant, never its id (seed rule 2). */
export interface Plant {
  name: string;
  tag?: string;
}

/**
 * Creates a plant. The body was already validated against NewPlant and the caller holds
 * plants:write; here the store decides, atomically, between a new plant, an idempotent retry
 * and a conflict. Unknown properties of the body are dropped here: never stored, never echoed.
 */
export async function createPlant(store: Store, input: NewPlantInput): Promise<Plant> {
  const plant: PlantRecord = {
    id: BigInt(input.id),
    name: input.name,
    ...(input.tag !== undefined && { tag: input.tag }),
  };
  const outcome = await store.createPlant(plant);
  if (outcome.kind === 'conflict') {
    throw new HttpError(409, `plant ${plant.id} already exists with a different name or tag`);
  }
  return toPlant(plant);
}

export function toPlant(record: PlantRecord): Plant {
  return record.tag === undefined ? { name: record.name } : { name: record.name, tag: record.tag };
}
