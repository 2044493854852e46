import { plantConflict } from '../domain/errors.js';
import { plantRecord } from '../domain/plant.js';
import type { OperationInput } from '../openapi/operation-types.js';
import type { Store } from '../store/store.js';
import type { PlantChanged, WriteContext } from './change-plant.js';

/** The request body of creation, as validated against NewPlant: id is exact (number or bigint). */
export type NewPlantInput = OperationInput<'addPlant'>['body'];

/**
 * Creates a plant. The store decides, atomically, between a new plant, an idempotent retry
 * (same name and tag: answered like a creation, nothing changes) and a conflict. Properties
 * the schema does not name were already dropped: never stored, never echoed.
 */
export async function createPlant(
  store: Pick<Store, 'plants'>,
  input: NewPlantInput,
  { tracing }: WriteContext = {},
): Promise<PlantChanged> {
  const plant = plantRecord(BigInt(input.id), input.name, input.tag);
  const outcome = await store.plants.write({ kind: 'create', plant });
  // Before the answer, and so before the dispatcher looks: its deliveries carry the request's trace.
  tracing?.changed(outcome);
  if (outcome.kind === 'conflict') {
    throw plantConflict(plant.id);
  }
  return { plant, position: outcome.position };
}
