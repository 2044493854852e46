// The one write path of plants, called by both stores: it reads what each write touches (and
// inserts the creations whose id is free, in the same step), decides with the domain's rules,
// applies the other row changes and writes them to the change log, all inside the caller's
// transaction.
import { StoreUnavailableError } from '../domain/errors.js';
import type { PlantRecord } from '../domain/plant.js';
import {
  decideWrite,
  eventOf,
  isRefusal,
  writeId,
  WritesRefused,
  type PlantWrite,
  type Refusal,
  type RowChange,
  type WriteOutcome,
  type Written,
} from '../domain/plant-write.js';
import { newEvent, type NewEvent } from '../domain/webhook.js';

/** What a write touches: the plants stored under its ids, and where the change log stands. */
export interface Current {
  /** As they were before the creations of `read` went in. */
  plants: Map<bigint, PlantRecord>;
  /** The ids the creations of `read` took: those that were free. */
  inserted: Set<bigint>;
  /** The change log's current position, as read: what a write that changes nothing answers. */
  position: bigint;
}

/** What a store offers the write path inside one of its transactions. */
export interface PlantTx {
  /**
   * The plants stored under these (distinct) ids now, locked until the transaction ends; then
   * inserts `creations` (plants of some of those ids) where their id is free, in the same step.
   */
  read(ids: bigint[], creations: PlantRecord[]): Promise<Current>;
  /** Inserts these plants where their id is free; resolves to the ids it inserted. */
  insert(plants: PlantRecord[]): Promise<Set<bigint>>;
  /** Replaces these plants, each stored now as its `before`. */
  update(updates: { plant: PlantRecord; before: PlantRecord }[]): Promise<void>;
  /** Deletes these plants, each stored now as given (its name says which words go with it). */
  delete(plants: PlantRecord[]): Promise<void>;
  /**
   * The last step, once per transaction when anything changed: writes these changes to the change
   * log, in this order, and the outbox's deliveries of those an endpoint subscribes to; resolves
   * to their positions. Positions ascend in commit order across every writer (on PostgreSQL the
   * step takes the log's lock, and commits: postgres/outbox.ts).
   */
  log(events: NewEvent[]): Promise<bigint[]>;
}

/**
 * Splits writes into rounds of distinct ids, keeping their order: a write sees what an earlier
 * write of the same id did, as if they had come one after the other.
 */
function rounds(writes: PlantWrite[]): number[][] {
  const out: number[][] = [];
  const seen = new Map<bigint, number>();
  writes.forEach((w, i) => {
    const id = writeId(w);
    const r = seen.get(id) ?? 0;
    seen.set(id, r + 1);
    (out[r] ??= []).push(i);
  });
  return out;
}

/** A creation may find its id taken by another instance between read and insert, at most this often. */
const MAX_ATTEMPTS = 3;

export interface ApplyOptions {
  /**
   * The writes go all together or not at all (a batch): when one is refused, `applyWrites` throws
   * WritesRefused before logging anything, and the caller rolls its transaction back. Otherwise
   * (writes that merely arrived together, an import) a refused write answers its refusal and the
   * others go ahead.
   */
  allOrNothing?: boolean;
  now?: number;
}

/**
 * Applies the writes in order in `tx`; one outcome per write, with its position in the change log.
 * Every change is logged in the one last step, in the order of the writes: a batch's changes take
 * ascending positions in the order it gave them.
 */
export async function applyWrites(
  writes: PlantWrite[],
  tx: PlantTx,
  { allOrNothing = false, now = Date.now() }: ApplyOptions = {},
): Promise<Written[]> {
  const outcomes: WriteOutcome[] = new Array<WriteOutcome>(writes.length);
  const logged: { i: number; change: RowChange }[] = [];
  let position: bigint | undefined;
  for (const round of rounds(writes)) {
    let pending = round;
    for (let attempt = 1; pending.length > 0; attempt++) {
      // Contention, as a lock wait past its time is: the client retries.
      if (attempt > MAX_ATTEMPTS)
        throw new StoreUnavailableError(undefined, 'the store is busy with other writes; retry later');
      // A creation inserts its plant exactly when its id is free (decideWrite), whatever else
      // holds: so it goes in with the read, one step fewer (on PostgreSQL one round trip).
      const creations = pending.flatMap((i) => (writes[i]!.kind === 'create' ? [writes[i]!.plant] : []));
      const current = await tx.read(
        pending.map((i) => writeId(writes[i]!)),
        creations,
      );
      // The last read's: a write that changed nothing answers where the log stood after it waited.
      position = current.position;
      const decided = pending.map((i) => ({ i, ...decideWrite(writes[i]!, current.plants.get(writeId(writes[i]!))) }));
      const inserts = decided.filter((d) => d.change?.kind === 'insert');
      // An id free when read and taken when inserted: another writer's creation won the race,
      // and this write is decided again next time, against that plant.
      const lost = new Set(inserts.filter((d) => !current.inserted.has(d.change!.plant.id)).map((d) => d.i));
      const done = decided.filter((d) => !lost.has(d.i));
      const changes = done.flatMap((d) => (d.change ? [d.change] : []));
      const updates = changes.flatMap((c) => (c.kind === 'update' ? [c] : []));
      const deletes = changes.flatMap((c) => (c.kind === 'delete' ? [c.plant] : []));
      if (updates.length) await tx.update(updates);
      if (deletes.length) await tx.delete(deletes);
      for (const d of done) {
        outcomes[d.i] = d.outcome;
        if (d.change) logged.push({ i: d.i, change: d.change });
      }
      pending = pending.filter((i) => lost.has(i));
    }
  }
  if (allOrNothing) {
    // Rounds run out of the writes' order; the first refusal in that order is the one that, one
    // write after the other, would have come first (every write before it decided the same).
    const first = outcomes.findIndex(isRefusal);
    if (first !== -1) throw new WritesRefused(first, outcomes[first] as Refusal);
  }
  logged.sort((a, b) => a.i - b.i);
  const events = logged.map(({ change: c }) =>
    newEvent(eventOf(c), c.plant, now, c.kind === 'update' ? c.before : undefined),
  );
  const positions = events.length ? await tx.log(events) : [];
  const at = new Map(logged.map(({ i }, k) => [i, positions[k]!]));
  // A write that changed nothing answers the log's position once the transaction is committed:
  // past its changes, among them one of the same plant before it (a creation, then its retry).
  const current = positions.at(-1) ?? position ?? 0n;
  return outcomes.map((o, i) => ({ ...o, position: at.get(i) ?? current }));
}
