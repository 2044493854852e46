import { InvalidInputError } from '../domain/errors.js';
import { plantRecord, type PlantRecord } from '../domain/plant.js';
import {
  isRefusal,
  refusalError,
  writeId,
  WritesRefused,
  type PlantWrite,
  type Written,
} from '../domain/plant-write.js';
import type { Preconditions } from '../domain/preconditions.js';
import type { OperationInput } from '../openapi/operation-types.js';
import type { Store } from '../store/store.js';
import type { WriteContext } from './change-plant.js';

/** A batch as the contract lets it through (the Batch schema): 1 to 1,000 operations, ids exact. */
export type BatchInput = OperationInput<'writePlantBatch'>['body'];
type Operation = BatchInput['operations'][number];

/** One operation's result: the plant it leaves, or the plant a deletion took away. */
export interface BatchResult {
  plant: PlantRecord;
  deleted: boolean;
}

export interface BatchWritten {
  results: BatchResult[];
  /** The change log's position of the batch's last change (the current one when none changed anything). */
  position: bigint;
}

function resultOf(w: Written): BatchResult {
  // A refusal rejects the whole batch (WritesRefused): none is ever among its results.
  if (isRefusal(w)) throw new Error(`a batch answered ${w.kind} without refusing`);
  return { plant: w.plant, deleted: w.kind === 'deleted' };
}

/** An error of operation `index` says so first, in the words its single-plant operation uses. */
function inOperation(index: number, err: Error): Error {
  err.message = `operations[${index}]: ${err.message}`;
  return err;
}

/** A plant or a patch may repeat the operation's id; it cannot name another. */
function sameId(id: bigint, member: 'plant' | 'patch', inBody: number | bigint | undefined): void {
  if (inBody !== undefined && BigInt(inBody) !== id) {
    throw new InvalidInputError(`${member}.id (${inBody}) must equal id (${id})`);
  }
}

/**
 * `ifMatch` is one entity tag (or `*`), compared as If-Match compares: strongly, so a weak tag
 * (`W/"x"`, even of the plant's own ETag) is left out as the edge leaves it out of If-Match
 * (Preconditions): no tag is left, which no ETag matches, and the operation is 412, as a single
 * write's `If-Match: W/"x"` is.
 */
function conditions(ifMatch: string | undefined): Preconditions | undefined {
  if (ifMatch === undefined) return undefined;
  if (ifMatch === '*') return { ifMatch: '*' };
  return { ifMatch: ifMatch.startsWith('W/') ? [] : [ifMatch] };
}

/** The write an operation asks for, by the rules of its single-plant operation. */
function writeOf(op: Operation): PlantWrite {
  switch (op.op) {
    case 'create':
      return { kind: 'create', plant: plantRecord(BigInt(op.plant.id), op.plant.name, op.plant.tag) };
    case 'replace': {
      const id = BigInt(op.id);
      sameId(id, 'plant', op.plant.id);
      return {
        kind: 'replace',
        plant: plantRecord(id, op.plant.name, op.plant.tag),
        conditions: conditions(op.ifMatch),
      };
    }
    case 'patch': {
      const id = BigInt(op.id);
      sameId(id, 'patch', op.patch.id);
      const { id: _id, ...patch } = op.patch;
      return { kind: 'patch', id, patch, conditions: conditions(op.ifMatch) };
    }
    case 'delete':
      return { kind: 'delete', id: BigInt(op.id), conditions: conditions(op.ifMatch) };
  }
}

/**
 * Applies a batch: every operation, in order, in one transaction and one durable commit, or none
 * of them. The first operation that fails (alone it would have been 400, 404, 409 or 412) answers
 * for the batch, its message led by its index; nothing was applied then.
 */
export async function writeBatch(
  store: Pick<Store, 'plants'>,
  input: BatchInput,
  { tracing }: WriteContext = {},
): Promise<BatchWritten> {
  const writes = input.operations.map((op, i) => {
    try {
      return writeOf(op);
    } catch (err) {
      throw inOperation(i, err as Error);
    }
  });
  try {
    const written = await store.plants.writeBatch(writes);
    tracing?.changed(written);
    return {
      results: written.map(resultOf),
      // Positions ascend in the operations' order, and an operation that changed nothing answers the last.
      position: written.at(-1)!.position,
    };
  } catch (err) {
    if (!(err instanceof WritesRefused)) throw err;
    throw inOperation(err.index, refusalError(writeId(writes[err.index]!), err.outcome));
  }
}
