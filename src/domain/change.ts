// The change log: every change to a plant, in commit order, as the feed serves it. Nothing here
// does I/O.
import { GoneError } from './errors.js';
import type { EventType } from './webhook.js';

export type ChangeType = 'created' | 'updated' | 'deleted';

const TYPE_OF: Record<EventType, ChangeType> = {
  'plant.created': 'created',
  'plant.updated': 'updated',
  'plant.deleted': 'deleted',
};

/** One change as the log holds it. */
export interface Change {
  /** Strictly increasing in commit order across the store and every instance. */
  position: bigint;
  type: ChangeType;
  id: bigint;
  /** `{id, name, tag?}` written exactly: the plant after the change (before it, for a deletion). */
  body: string;
  /** The plant's tag after the change (before it, for a deletion), and before it when it changed. */
  tag: string | null;
  oldTag: string | null;
  /** Epoch milliseconds. */
  time: number;
  /**
   * The change as the feed sends it, written once and shared by every reader:
   * `{"position":…,"type":…,"id":…,"plant":{…},"time":"…"}` (no plant for a deletion).
   */
  json: string;
}

/** A change as read from a store's row: its JSON is written here, once. */
export function changeOf(row: Omit<Change, 'type' | 'json'> & { type: EventType }): Change {
  const type = TYPE_OF[row.type];
  const plant = type === 'deleted' ? '' : `,"plant":${row.body}`;
  const json =
    `{"position":${row.position},"type":"${type}","id":${row.id}${plant},` +
    `"time":"${new Date(row.time).toISOString()}"}`;
  return { ...row, type, json };
}

/** Which changes a reader wants: of plants with one of these tags before or after, or of one plant. */
export interface ChangeFilter {
  tags?: readonly string[];
  id?: bigint;
}

export function matches(change: Change, filter: ChangeFilter): boolean {
  if (filter.id !== undefined && change.id !== filter.id) return false;
  if (filter.tags === undefined) return true;
  return filter.tags.some((t) => t === change.tag || t === change.oldTag);
}

/** Whether a plant as it is passes the filter (a snapshot's plants: `snapshot=true`). */
export function plantPasses(plant: { id: bigint; tag?: string }, filter: ChangeFilter): boolean {
  if (filter.id !== undefined && plant.id !== filter.id) return false;
  return filter.tags === undefined || (plant.tag !== undefined && filter.tags.includes(plant.tag));
}

/**
 * What the log holds now: every change above `floor - 1` up to `current` (the last committed).
 * A new log (a new store, a restore) starts at a floor past any position an earlier one reached.
 */
export interface LogBounds {
  floor: bigint;
  current: bigint;
}

/** The position a reader may follow from: `after` itself, or the reason it cannot. */
export function followFrom(after: bigint | undefined, bounds: LogBounds): bigint {
  if (after === undefined) return bounds.floor - 1n;
  if (after > bounds.current) {
    throw new GoneError(
      `position ${after} is past this store's current position (${bounds.current}): it comes from another ` +
        'store, or from before a restore; list the plants again and follow from the Change-Position of the list',
    );
  }
  if (after < bounds.floor - 1n) {
    throw new GoneError(
      `position ${after} is older than the oldest change kept (${bounds.floor}), or comes from before a restore ` +
        'of this store; list the plants again and follow from the Change-Position of the list',
    );
  }
  return after;
}

/**
 * The index of the first of `items` (in ascending position order) whose position is past
 * `position`; `items.length` when none is. A binary search: the hub's ring of recent changes and
 * a standby's samples of the primary's position are both kept in that order.
 */
export function firstPast(items: readonly { position: bigint }[], position: bigint): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid]!.position <= position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
