import type { QueryConfig, QueryResultRow } from 'pg';
import { changeOf, type Change, type ChangeFilter } from '../../domain/change.js';
import type { EventType, NewEvent } from '../../domain/webhook.js';
import { SCAN_WINDOW, type ChangeLog } from '../changes.js';
import type { Run } from './rows.js';

/**
 * The log's current position: its last change, or just below its floor while it holds none since
 * (rows below the floor are older events kept for their webhook deliveries).
 */
export const CURRENT_POSITION = `SELECT greatest((SELECT floor - 1 FROM change_floor), (SELECT max(seq) FROM changes))`;

/**
 * A sequence would hand positions out before the commit: two transactions that took 10 and 11
 * may commit 11 first, and a reader that saw 11 would never go back for 10. So the last step of
 * every transaction that writes changes takes this lock first, keyed by the store's schema, and
 * holds it to the end of the commit; under it, the transaction's changes take the positions past
 * the log's current one (read after the lock, so it sees every earlier holder's commit).
 * Positions are taken in the order transactions commit, on one instance or many, and a change is
 * visible before the next transaction can take a position (PostgreSQL ends a transaction's
 * visibility before it releases its locks): a snapshot sees a prefix of the log, and
 * `seq > after` never passes a change that could still appear.
 *
 * The lock is taken in the round trip that commits (pool.ts, commitWith): it is held for the
 * server's part of the commit only, never across a round trip to this process, and the batches
 * of one instance already commit one at a time (plants.ts), so it orders instances, not requests.
 */
export const LOCK = `SELECT pg_advisory_xact_lock(hashtext('plant-store change log ' || current_schema()))`;

/**
 * Under the lock: the changes ($1 to $6: their columns) take the positions past the log's current
 * one, in their order, with one outbox delivery per endpoint that subscribes to each; answers the
 * position before them.
 */
export const LOG_CHANGES = `WITH cur AS (${CURRENT_POSITION} AS p), ev AS (
  INSERT INTO changes (seq, type, plant_id, body, tag, old_tag, created_at)
  SELECT cur.p + u.n, u.type, u.plant_id, u.body, u.tag, u.old_tag, u.created_at
  FROM cur, unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[])
       WITH ORDINALITY AS u (type, plant_id, body, tag, old_tag, created_at, n)
  RETURNING seq, type, plant_id, created_at
), d AS (
  INSERT INTO deliveries (event_seq, endpoint_id, plant_id, next_attempt_at)
  SELECT ev.seq, e.id, ev.plant_id, ev.created_at FROM ev JOIN webhook_endpoints e
  ON e.enabled AND ev.type = ANY (e.events)
)
SELECT (SELECT p FROM cur)::text AS before`;

/**
 * Writes changes to the change log (the changes table, whose seq is the position) and one outbox
 * delivery per endpoint that subscribes to each, under the log's lock, then commits: the last
 * step of a write transaction. Resolves to the changes' positions, in their order.
 */
export async function logChanges(
  commitWith: (queries: QueryConfig[]) => Promise<QueryResultRow[][]>,
  events: NewEvent[],
): Promise<bigint[]> {
  const [, rows = []] = await commitWith([
    { text: LOCK },
    {
      text: LOG_CHANGES,
      values: [
        events.map((e) => e.type),
        events.map((e) => String(e.plantId)),
        events.map((e) => e.body),
        events.map((e) => e.tag),
        events.map((e) => e.oldTag),
        events.map((e) => String(e.createdAt)),
      ],
    },
  ]);
  const before = BigInt(rows[0]!.before as string);
  return events.map((_, i) => before + BigInt(i + 1));
}

interface ChangeRow {
  seq: string;
  type: EventType;
  plant_id: string;
  body: string;
  tag: string | null;
  old_tag: string | null;
  created_at: string;
}

const COLUMNS =
  'seq::text AS seq, type, plant_id::text AS plant_id, body, tag, old_tag, created_at::text AS created_at';

const change = (r: ChangeRow): Change =>
  changeOf({
    position: BigInt(r.seq),
    type: r.type,
    id: BigInt(r.plant_id),
    body: r.body,
    tag: r.tag,
    oldTag: r.old_tag,
    time: Number(r.created_at),
  });

/** The change log of the PostgreSQL store: see LOCK for why reading it by position is safe. */
export function postgresChanges(run: Run): Omit<ChangeLog, 'onWritten'> {
  return {
    async bounds() {
      const [row] = await run<{ floor: string; current: string }>({
        text: `SELECT floor::text AS floor, (${CURRENT_POSITION})::text AS current FROM change_floor`,
      });
      return { floor: BigInt(row!.floor), current: BigInt(row!.current) };
    },
    async read(after, upTo, limit, filter: ChangeFilter) {
      const range = [String(after), String(upTo), limit];
      let rows: ChangeRow[];
      let end = upTo;
      if (filter.id !== undefined) {
        rows = await run<ChangeRow>({
          text: `SELECT ${COLUMNS} FROM changes WHERE plant_id = $4 AND seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`,
          values: [...range, String(filter.id)],
        });
      } else if (filter.tags !== undefined) {
        end = after + SCAN_WINDOW < upTo ? after + SCAN_WINDOW : upTo;
        rows = await run<ChangeRow>({
          text: `SELECT ${COLUMNS} FROM changes WHERE seq > $1 AND seq <= $2
                   AND (tag = ANY ($4::text[]) OR old_tag = ANY ($4::text[])) ORDER BY seq LIMIT $3`,
          values: [String(after), String(end), limit, filter.tags],
        });
      } else {
        rows = await run<ChangeRow>({
          text: `SELECT ${COLUMNS} FROM changes WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`,
          values: range,
        });
      }
      const changes = rows.map(change);
      return { changes, scannedTo: changes.length === limit ? changes.at(-1)!.position : end };
    },
    async prune(before) {
      // As on SQLite: the first change kept is walked to in position order from the floor, so a
      // log with nothing to prune costs one row's read; everything below it goes (but what a
      // delivery still waits for), and the floor rises to it.
      const [row] = await run<{ n: string }>({
        text: `WITH kept AS (
                 SELECT coalesce(
                   (SELECT seq FROM changes WHERE seq >= (SELECT floor FROM change_floor) AND created_at >= $1
                    ORDER BY seq LIMIT 1),
                   (${CURRENT_POSITION}) + 1) AS seq
               ), gone AS (
                 DELETE FROM changes WHERE seq >= (SELECT floor FROM change_floor) AND seq < (SELECT seq FROM kept)
                   AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = changes.seq AND d.state = 'pending')
                 RETURNING seq
               ), raised AS (
                 UPDATE change_floor SET floor = greatest(floor, (SELECT seq FROM kept))
               )
               SELECT count(*)::text AS n FROM gone`,
        values: [String(before)],
      });
      return Number(row?.n ?? 0);
    },
  };
}
