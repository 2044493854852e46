// The rules of a write, in one place: both stores read the plant a write touches, ask
// `decideWrite` what to do, and apply what it says. Nothing here does I/O.
import { hash } from 'node:crypto';
import { plantConflict, plantNotFound, plantPreconditionFailed } from './errors.js';
import { plantRecord, samePlant, type PlantRecord } from './plant.js';
import { failedPrecondition, type FailedPrecondition, type Preconditions } from './preconditions.js';
import type { EventType } from './webhook.js';

/** A change of an existing plant may carry conditions, decided with the change in one transaction. */
export type PlantWrite =
  | { kind: 'create'; plant: PlantRecord }
  | { kind: 'replace'; plant: PlantRecord; conditions?: Preconditions }
  /** A JSON merge patch over {name, tag}: absent keeps, a value sets, `tag: null` removes the tag. */
  | { kind: 'patch'; id: bigint; patch: { name?: string; tag?: string | null }; conditions?: Preconditions }
  | { kind: 'delete'; id: bigint; conditions?: Preconditions };

export type WriteOutcome =
  | { kind: 'created'; plant: PlantRecord }
  /** Nothing to change: a creation retried with the same name and tag, or a change to what is already stored. */
  | { kind: 'unchanged'; plant: PlantRecord }
  | { kind: 'updated'; plant: PlantRecord }
  | { kind: 'deleted'; plant: PlantRecord }
  /** A creation whose id holds another plant. */
  | { kind: 'conflict'; existing: PlantRecord }
  | { kind: 'not-found' }
  /** The stored plant fails the write's conditions: `failed` names the header. */
  | { kind: 'precondition-failed'; current: PlantRecord; failed: FailedPrecondition };

/**
 * An outcome with its place in the change log: its change's position, or the log's current
 * position when it changed nothing.
 */
export type Written = WriteOutcome & { position: bigint };

/** An outcome that refuses its write: a batch with one of these applies nothing. */
export type Refusal = Extract<WriteOutcome, { kind: 'conflict' | 'not-found' | 'precondition-failed' }>;

export function isRefusal(outcome: WriteOutcome): outcome is Refusal {
  return outcome.kind === 'conflict' || outcome.kind === 'not-found' || outcome.kind === 'precondition-failed';
}

/** The error a refused write of plant `id` answers, as its single-plant operation says it. */
export function refusalError(id: bigint, refusal: Refusal): Error {
  switch (refusal.kind) {
    case 'conflict':
      return plantConflict(id);
    case 'not-found':
      return plantNotFound(id);
    case 'precondition-failed':
      return plantPreconditionFailed(id, refusal.failed);
  }
}

/**
 * Writes that go all together or not at all were refused, and none of them was applied: `index`
 * is the first of them, in their order, whose outcome refuses it. The writes before it are
 * decided as they would have been one after the other; it is the one that would have failed first.
 */
export class WritesRefused extends Error {
  override name = 'WritesRefused';
  constructor(
    readonly index: number,
    readonly outcome: Refusal,
  ) {
    super(`write ${index} was refused (${outcome.kind}); none was applied`);
  }
}

/** What the store must do for one write: the row change, and the event that announces it. */
export type RowChange =
  | { kind: 'insert'; plant: PlantRecord }
  /** `before` is what it replaces: a store rewrites only the columns that differ. */
  | { kind: 'update'; plant: PlantRecord; before: PlantRecord }
  | { kind: 'delete'; plant: PlantRecord };

export interface WriteDecision {
  outcome: WriteOutcome;
  /** Undefined when nothing changes: then no event is written either. */
  change: RowChange | undefined;
}

const EVENT_OF: Record<RowChange['kind'], EventType> = {
  insert: 'plant.created',
  update: 'plant.updated',
  delete: 'plant.deleted',
};

/** The event a row change announces: only a real change has one. */
export function eventOf(change: RowChange): EventType {
  return EVENT_OF[change.kind];
}

/** The id of the plant a write touches. */
export function writeId(write: PlantWrite): bigint {
  return write.kind === 'create' || write.kind === 'replace' ? write.plant.id : write.id;
}

/**
 * A strong entity tag of a plant's representation: it changes whenever its name or tag does,
 * and is the same for the same content (RFC 9110, 8.8.3).
 */
export function etagOf(plant: PlantRecord): string {
  const content = JSON.stringify([String(plant.id), plant.name, plant.tag ?? null]);
  return `"${hash('sha256', content, 'base64url').slice(0, 27)}"`;
}

/** Why a change of this existing plant may not go ahead, if it may not. */
function refused(current: PlantRecord, conditions: Preconditions | undefined): WriteDecision | undefined {
  // Hashed only for a conditional write.
  const failed = conditions && failedPrecondition(conditions, etagOf(current));
  return failed && { outcome: { kind: 'precondition-failed', current, failed }, change: undefined };
}

function change(current: PlantRecord, next: PlantRecord): WriteDecision {
  if (samePlant(current, next)) return { outcome: { kind: 'unchanged', plant: current }, change: undefined };
  return { outcome: { kind: 'updated', plant: next }, change: { kind: 'update', plant: next, before: current } };
}

/** Decides one write against the plant stored under its id now (undefined: none). */
export function decideWrite(write: PlantWrite, current: PlantRecord | undefined): WriteDecision {
  switch (write.kind) {
    case 'create':
      if (current === undefined) {
        return { outcome: { kind: 'created', plant: write.plant }, change: { kind: 'insert', plant: write.plant } };
      }
      return samePlant(current, write.plant)
        ? { outcome: { kind: 'unchanged', plant: current }, change: undefined }
        : { outcome: { kind: 'conflict', existing: current }, change: undefined };
    case 'replace':
    case 'patch':
    case 'delete': {
      // A missing plant is not-found whatever the conditions: RFC 9110 13.2.1 has a server
      // ignore them when the request would fail without them.
      if (current === undefined) return { outcome: { kind: 'not-found' }, change: undefined };
      const failed = refused(current, write.conditions);
      if (failed) return failed;
      if (write.kind === 'delete') {
        return { outcome: { kind: 'deleted', plant: current }, change: { kind: 'delete', plant: current } };
      }
      if (write.kind === 'replace') return change(current, write.plant);
      const { name = current.name } = write.patch;
      const tag = write.patch.tag === null ? undefined : (write.patch.tag ?? current.tag);
      return change(current, plantRecord(current.id, name, tag));
    }
  }
}
