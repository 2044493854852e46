import { followFrom, matches, type Change, type ChangeFilter } from '../domain/change.js';
import { GoneError } from '../domain/errors.js';
import type { ChangeHub } from '../feed/hub.js';
import type { OperationInput } from '../openapi/operation-types.js';
import type { ChangeLog } from '../store/changes.js';

/** The query of GET /plants/changes, validated against its parameters (`limit` filled in). */
export type ChangesInput = OperationInput<'listChanges'>['query'];

/** What reading the log needs: the store's log, and this instance's view of its end. */
export interface Feed {
  log: ChangeLog;
  hub: ChangeHub;
}

export interface ChangesPage {
  changes: Change[];
  /** Where the next page starts, when more may follow (a filtered page may have stopped looking). */
  nextAfter: bigint | undefined;
}

export function filterOf(query: Pick<ChangesInput, 'tag' | 'id'>): ChangeFilter {
  return { ...(query.tag && { tags: query.tag }), ...(query.id !== undefined && { id: query.id }) };
}

/**
 * The position a reader follows from: `after` when the log can still give every change past it,
 * else GoneError. A position past what this instance has seen is checked against the store
 * itself (another instance may have made it).
 */
export async function startingPoint({ hub }: Feed, after: bigint | undefined): Promise<bigint> {
  const fresh = (after !== undefined && after > hub.known) || (after ?? 0n) < hub.floor - 1n;
  return followFrom(after, fresh ? await hub.bounds() : { floor: hub.floor, current: hub.known });
}

/**
 * Up to `limit` changes after `after` that pass `filter`: from this instance's memory when it
 * reaches back that far, else from the store. A read from the store is checked against the
 * floor again once done: a prune that ran meanwhile may have taken changes it should have had.
 */
export async function readAfter(
  { log, hub }: Feed,
  after: bigint,
  limit: number,
  filter: ChangeFilter,
  // A write acknowledged here is read back at once: from the store while the hub is still reading it.
  upTo = hub.known,
): Promise<{ changes: Change[]; scannedTo: bigint }> {
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
  const page = await log.read(after, upTo, limit, filter);
  const { floor } = await log.bounds();
  if (after < floor - 1n) {
    throw new GoneError(`the changes after position ${after} were pruned while being read; list the plants again`);
  }
  return page;
}

/**
 * One page of changes; with `wait`, when none follows yet, waits for one up to that long (a long
 * poll), ending early when `signal` aborts (the server is closing).
 */
export async function listChanges(feed: Feed, query: ChangesInput, signal?: AbortSignal): Promise<ChangesPage> {
  const filter = filterOf(query);
  const start = await startingPoint(feed, query.after);
  let after = start;
  const deadline = Date.now() + (query.wait ?? 0) * 1000;
  for (;;) {
    const { changes, scannedTo } = await readAfter(feed, after, query.limit, filter);
    const more = changes.length === query.limit || scannedTo < feed.hub.known;
    if (changes.length > 0 || more || Date.now() >= deadline || signal?.aborted) {
      // A filter that passed over changes while it waited says where it got, so the next poll
      // does not look at them again.
      const passed = changes.length === 0 && scannedTo > start;
      return { changes, nextAfter: more || passed ? scannedTo : undefined };
    }
    after = scannedTo;
    await feed.hub.waitPast(after, deadline - Date.now(), signal);
  }
}
