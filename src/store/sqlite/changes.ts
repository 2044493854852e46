import type Database from 'better-sqlite3';
import { changeOf, type Change, type ChangeFilter } from '../../domain/change.js';
import type { EventType, NewEvent } from '../../domain/webhook.js';
import { SCAN_WINDOW, type ChangeLog } from '../changes.js';
import { manyRows, valuesOf } from './many-rows.js';
import { sqliteRead, type SqliteAccess } from './writer.js';

/**
 * The log's current position: its last change, or just below its floor while it holds none since
 * (rows below the floor are older events kept for their webhook deliveries).
 */
export const CURRENT_POSITION = `SELECT max((SELECT floor - 1 FROM change_floor), coalesce((SELECT max(seq) FROM changes), 0))`;

/** Most changes one INSERT writes: its statement is prepared once for each count up to this. */
const ROWS = 100;

/**
 * Writes changes to the change log (the changes table, whose seq is the position), on the write
 * connection inside the writer's transaction, with one outbox delivery per endpoint that
 * subscribes to each: a change is committed with what it announces, or not at all. One writer
 * commits one transaction at a time, so positions ascend in commit order by themselves: each
 * change takes the one past the log's current position (never one a prune took away, since the
 * floor rises past those). Up to ROWS changes go in one statement.
 */
export function sqliteLog(
  db: Database.Database,
): (events: NewEvent[], after: { position: bigint; subscribers: boolean }) => bigint[] {
  const insert = manyRows(
    db,
    ROWS,
    (n) => `INSERT INTO changes (seq, type, plant_id, body, tag, old_tag, created_at) VALUES ${valuesOf(n, 7)}`,
  );
  const s = {
    // Each change of the range to every enabled endpoint that subscribes to its type.
    insertDeliveries: db.prepare<[bigint, bigint]>(
      `INSERT INTO deliveries (event_seq, endpoint_id, plant_id, next_attempt_at)
       SELECT ev.seq, e.id, ev.plant_id, ev.created_at FROM changes ev JOIN webhook_endpoints e
       ON e.enabled = 1 AND instr(' ' || e.events || ' ', ' ' || ev.type || ' ') > 0
       WHERE ev.seq BETWEEN ? AND ?`,
    ),
  };
  // `after`: the log's position and whether an endpoint is enabled, as the transaction read them.
  return (events, after) => {
    if (events.length === 0) return [];
    const first = after.position + 1n;
    const positions = events.map((_, i) => first + BigInt(i));
    insert.run(events, (e, i) => [positions[i], e.type, e.plantId, e.body, e.tag, e.oldTag, e.createdAt]);
    if (after.subscribers) s.insertDeliveries.run(first, positions.at(-1)!);
    return positions;
  };
}

interface ChangeRow {
  seq: bigint;
  type: EventType;
  plant_id: bigint;
  body: string;
  tag: string | null;
  old_tag: string | null;
  created_at: bigint;
}

const COLUMNS = 'seq, type, plant_id, body, tag, old_tag, created_at';

const change = (r: ChangeRow): Change =>
  changeOf({
    position: r.seq,
    type: r.type,
    id: r.plant_id,
    body: r.body,
    tag: r.tag,
    oldTag: r.old_tag,
    time: Number(r.created_at),
  });

/**
 * The change log of the SQLite store. One writer commits one transaction at a time, so the
 * positions a reader sees ascend in commit order by themselves. What it must not serve is a
 * change that is committed but not yet durable: the writer acknowledges a write only after the
 * fsync of its commit (wal-sync.ts), and a change served before that could vanish with a power
 * cut and its position be given again to another. The writer says when each commit is durable
 * (onCommit), and the current position is held at the last durable one while commits wait for
 * their fsync. Another process's writes (a command) count once they are seen, as that process
 * syncs its own commits before it returns.
 */
export function sqliteChanges({ read, write, writer }: SqliteAccess): Omit<ChangeLog, 'onWritten'> {
  const s = {
    floor: read.prepare<[], bigint>('SELECT floor FROM change_floor').pluck(),
    current: read.prepare<[], bigint>(CURRENT_POSITION).pluck(),
    // As a commit returns: every change this writer committed is at or below it.
    committed: write.prepare<[], bigint>('SELECT coalesce(max(seq), 0) FROM changes').pluck(),
    all: read.prepare<{ after: bigint; upTo: bigint; limit: number }, ChangeRow>(
      `SELECT ${COLUMNS} FROM changes WHERE seq > @after AND seq <= @upTo ORDER BY seq LIMIT @limit`,
    ),
    one: read.prepare<{ after: bigint; upTo: bigint; limit: number; id: bigint }, ChangeRow>(
      `SELECT ${COLUMNS} FROM changes WHERE plant_id = @id AND seq > @after AND seq <= @upTo ORDER BY seq LIMIT @limit`,
    ),
    tagged: read.prepare<{ after: bigint; upTo: bigint; limit: number; tags: string }, ChangeRow>(
      `SELECT ${COLUMNS} FROM changes WHERE seq > @after AND seq <= @upTo
         AND (tag IN (SELECT value FROM json_each(@tags)) OR old_tag IN (SELECT value FROM json_each(@tags)))
       ORDER BY seq LIMIT @limit`,
    ),
    // The first change kept: the oldest made at or after the cutoff, walked to in position order
    // from the floor (the log's times ascend with its positions), so a log with nothing to prune
    // costs one row's read, not a walk of every change.
    kept: write
      .prepare<[number], bigint>(
        `SELECT seq FROM changes WHERE seq >= (SELECT floor FROM change_floor) AND created_at >= ? ORDER BY seq LIMIT 1`,
      )
      .pluck(),
    prune: write.prepare<[bigint]>(
      `DELETE FROM changes WHERE seq >= (SELECT floor FROM change_floor) AND seq < ?
         AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = changes.seq AND d.state = 'pending')`,
    ),
    next: write.prepare<[], bigint>(`${CURRENT_POSITION} + 1`).pluck(),
    raise: write.prepare<[bigint]>('UPDATE change_floor SET floor = max(floor, ?)'),
  };
  /** The position of the last commit made durable by this process's writer (what opening found, first). */
  let durable = s.committed.get()!;
  writer.onCommit = () => {
    const top = s.committed.get()!;
    return () => {
      if (top > durable) durable = top;
    };
  };

  return {
    bounds: () =>
      sqliteRead(() => {
        const floor = s.floor.get()!;
        const seen = s.current.get()!;
        // Commits of this writer waiting for their fsync hold the position at the last durable one.
        const current = writer.pending > 0 && seen > durable ? (durable > floor - 1n ? durable : floor - 1n) : seen;
        return { floor, current };
      }),
    read: (after, upTo, limit, filter: ChangeFilter) =>
      sqliteRead(() => {
        let rows: ChangeRow[];
        let end = upTo;
        if (filter.id !== undefined) rows = s.one.all({ after, upTo, limit, id: filter.id });
        else if (filter.tags !== undefined) {
          end = after + SCAN_WINDOW < upTo ? after + SCAN_WINDOW : upTo;
          rows = s.tagged.all({ after, upTo: end, limit, tags: JSON.stringify(filter.tags) });
        } else rows = s.all.all({ after, upTo, limit });
        const changes = rows.map(change);
        return { changes, scannedTo: changes.length === limit ? changes.at(-1)!.position : end };
      }),
    prune: (before) =>
      writer.run(() => {
        // Everything below the first change kept goes (but what a delivery still waits for), and
        // the floor rises to it.
        const kept = s.kept.get(before) ?? s.next.get()!;
        const gone = s.prune.run(kept).changes;
        s.raise.run(kept);
        return gone;
      }),
  };
}
