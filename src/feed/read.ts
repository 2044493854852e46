import { followFrom, matches, type Change, type ChangeFilter } from '../domain/change.js';
import { GoneError } from '../domain/errors.js';
import type { PlantRecord } from '../domain/plant.js';
import type { ChangeHub } from './hub.js';
import type { OperationInput } from '../openapi/operation-types.js';
import type { StoreReads } from '../store/store.js';

/** The query of GET /plants/changes, validated against its parameters (`limit` filled in). */
export type ChangesInput = OperationInput<'listChanges'>['query'];

/**
 * What reading the log needs: this instance's view of its end (which reads the primary), and
 * where a read of the log by position goes: a database that has every change up to `atLeast`
 * (a standby that has replayed it, or the primary: Store.reads).
 */
export interface Feed {
  hub: ChangeHub;
  reads(atLeast: bigint): Promise<Pick<StoreReads, 'changes'>>;
  /** The plants at one position of the log, from one consistent read of the primary (`snapshot=true`). */
  plantsAsOf(): Promise<PlantsAsOf>;
}

/** Every plant as the store held it at `position`, a page at a time; close it when done. */
export interface PlantsAsOf {
  position: bigint;
  pages(): AsyncIterable<PlantRecord[]>;
  close(): Promise<void>;
}

export interface ChangesPage {
  changes: Change[];
  /** Where the next page starts, when more may follow (a filtered page may have stopped looking). */
  nextAfter: bigint | undefined;
  /** How far it looked: every change up to here that passes the filter is in it, or before `after`. */
  lookedTo: bigint;
}

export function filterOf(query: Pick<ChangesInput, 'tag' | 'id'>): ChangeFilter {
  return { ...(query.tag && { tags: query.tag }), ...(query.id !== undefined && { id: query.id }) };
}

/**
 * The position a reader follows from: `after` when the log can still give every change past it,
 * else GoneError. A position at or past the end of this instance's view (`after`, or the
 * Change-Position `atLeast` the reader must see) is checked against the primary, never against a
 * standby that may not have it yet: another instance may have acknowledged a write past it a
 * moment ago, which this one would otherwise show only at its next look at the log (up to
 * 200 ms). The read that follows goes up to what the primary said (`bounds` moves `known`).
 */
export async function startingPoint({ hub }: Feed, after: bigint | undefined, atLeast = 0n): Promise<bigint> {
  const fresh = (after ?? 0n) >= hub.known || atLeast > hub.known || (after ?? 0n) < hub.floor - 1n;
  return followFrom(after, fresh ? await hub.bounds() : { floor: hub.floor, current: hub.known });
}

/**
 * Up to `limit` changes after `after`, up to `upTo`, that pass `filter`: from this instance's
 * memory when it reaches back that far, else from the store. The store's read goes to a database
 * past `after` (and past `atLeast`, the reader's Change-Position): a standby gives what it has
 * replayed, and the reader goes on from where it stopped. It is checked against that database's
 * floor once done: a prune that ran meanwhile may have taken changes it should have had.
 */
export async function readAfter(
  { reads, hub }: Feed,
  after: bigint,
  limit: number,
  filter: ChangeFilter,
  // A write acknowledged here is read back at once: from the store while the hub is still reading it.
  { upTo = hub.known, atLeast = 0n }: { upTo?: bigint; atLeast?: bigint } = {},
): Promise<{ changes: Change[]; scannedTo: bigint }> {
  if (after >= upTo) return { changes: [], scannedTo: upTo };
  const recent = upTo === hub.current ? hub.recent(after) : undefined;
  if (recent) {
    const changes: Change[] = [];
    for (const c of recent) {
      if (c.position > upTo) break;
      if (!matches(c, filter)) continue;
      changes.push(c);
      if (changes.length === limit) return { changes, scannedTo: c.position };
    }
    return { changes, scannedTo: upTo };
  }
  const { changes: log } = await reads(atLeast > after ? atLeast : after + 1n);
  const page = await log.read(after, upTo, limit, filter);
  const { floor } = await log.bounds();
  if (after < floor - 1n) {
    throw new GoneError(`the changes after position ${after} were pruned while being read; list the plants again`);
  }
  return page;
}

/**
 * One page of changes; with `wait`, when none follows yet, waits for one up to that long (a long
 * poll), ending early when `signal` aborts (the server is closing, the client left). With `atLeast` (the request's
 * Change-Position), a page that ends before it ends only because it is full.
 */
export async function listChanges(
  feed: Feed,
  query: ChangesInput,
  { signal, atLeast }: { signal?: AbortSignal; atLeast?: bigint } = {},
): Promise<ChangesPage> {
  const filter = filterOf(query);
  const start = await startingPoint(feed, query.after, atLeast);
  let after = start;
  const deadline = Date.now() + (query.wait ?? 0) * 1000;
  for (;;) {
    const { changes, scannedTo } = await readAfter(feed, after, query.limit, filter, { atLeast });
    const more = changes.length === query.limit || scannedTo < feed.hub.known;
    if (changes.length > 0 || more || Date.now() >= deadline || signal?.aborted) {
      // A filter that passed over changes while it waited says where it got, so the next poll
      // does not look at them again.
      const passed = changes.length === 0 && scannedTo > start;
      return { changes, nextAfter: more || passed ? scannedTo : undefined, lookedTo: scannedTo };
    }
    after = scannedTo;
    await feed.hub.waitPast(after, deadline - Date.now(), signal, filter);
  }
}
