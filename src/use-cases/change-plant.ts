import { InvalidInputError, plantNotFound } from '../domain/errors.js';
import { plantRecord, toPlant, type Plant, type PlantRecord } from '../domain/plant.js';
import type { Store } from '../store/store.js';

/** A PUT body, validated against PlantReplacement: its optional id is exact when present. */
export interface PlantReplacementInput {
  id?: number | bigint;
  name: string;
  tag?: string;
}

/** Replaces the name and tag of an existing plant; a tag absent from the body is removed. */
export async function replacePlant(store: Store, id: bigint, input: PlantReplacementInput): Promise<Plant> {
  if (input.id !== undefined && BigInt(input.id) !== id) {
    throw new InvalidInputError(`id in the body (${input.id}) must equal the id in the path (${id})`);
  }
  const plant = plantRecord(id, input.name, input.tag);
  if (!(await store.replacePlant(plant))) throw plantNotFound(id);
  return toPlant(plant);
}

/** Deletes a plant; its id may be created again afterwards. */
export async function deletePlant(store: Store, id: bigint): Promise<PlantRecord> {
  const deleted = await store.deletePlant(id);
  if (!deleted) throw plantNotFound(id);
  return deleted;
}
