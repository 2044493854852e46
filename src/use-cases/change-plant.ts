import { InvalidInputError } from '../domain/errors.js';
import { plantRecord, type PlantRecord } from '../domain/plant.js';
import { isRefusal, refusalError, type PlantWrite, type Written } from '../domain/plant-write.js';
import type { Preconditions } from '../domain/preconditions.js';
import type { OperationInput } from '../openapi/operation-types.js';
import type { Store } from '../store/store.js';
import type { Tracing } from '../tracing/tracing.js';

/** A PUT body, validated against PlantReplacement: its optional id is exact when present. */
export type PlantReplacementInput = OperationInput<'replacePlant'>['body'];

/**
 * The plant a write leaves (a deletion: the plant it took away), and the change log's position
 * of its change (the current one when it changed nothing).
 */
export interface PlantChanged {
  plant: PlantRecord;
  position: bigint;
}

/**
 * What a plant write's use-case is given beside the store, by whoever calls it (the routes, from
 * the services): traces, when on. Its changes join the trace under way, before the answer and so
 * before the dispatcher looks: their deliveries carry the request's trace.
 */
export interface WriteContext {
  tracing?: Pick<Tracing, 'changed'>;
}

/** What a change did, or the domain error its outcome means. */
function changed(id: bigint, outcome: Written, { tracing }: WriteContext): PlantChanged {
  tracing?.changed(outcome);
  if (isRefusal(outcome)) throw refusalError(id, outcome);
  return { plant: outcome.plant, position: outcome.position };
}

/** A body may repeat the plant's id; it cannot name another. */
function sameId(id: bigint, inBody: number | bigint | undefined): void {
  if (inBody !== undefined && BigInt(inBody) !== id) {
    throw new InvalidInputError(`id in the body (${inBody}) must equal the id in the path (${id})`);
  }
}

/** Replaces the name and tag of an existing plant; a tag absent from the body is removed. */
export async function replacePlant(
  store: Pick<Store, 'plants'>,
  id: bigint,
  input: PlantReplacementInput,
  conditions?: Preconditions,
  context: WriteContext = {},
): Promise<PlantChanged> {
  sameId(id, input.id);
  const write: PlantWrite = { kind: 'replace', plant: plantRecord(id, input.name, input.tag), conditions };
  return changed(id, await store.plants.write(write), context);
}

/**
 * A PATCH body, validated against PlantPatch: a JSON merge patch over the name and the tag
 * (`tag: null` removes it); its optional id is exact when present.
 */
export type PlantPatchInput = OperationInput<'patchPlant'>['body'];

/** Changes the fields the patch names, keeps the others; a patch that changes nothing is no write. */
export async function patchPlant(
  store: Pick<Store, 'plants'>,
  id: bigint,
  input: PlantPatchInput,
  conditions?: Preconditions,
  context: WriteContext = {},
): Promise<PlantChanged> {
  sameId(id, input.id);
  const { id: _id, ...patch } = input;
  return changed(id, await store.plants.write({ kind: 'patch', id, patch, conditions }), context);
}

/** Deletes a plant; its id may be created again afterwards. */
export async function deletePlant(
  store: Pick<Store, 'plants'>,
  id: bigint,
  conditions?: Preconditions,
  context: WriteContext = {},
): Promise<PlantChanged> {
  return changed(id, await store.plants.write({ kind: 'delete', id, conditions }), context);
}
