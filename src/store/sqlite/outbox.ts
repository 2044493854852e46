import type { EventType } from '../../domain/webhook.js';
import { claimable, eventIdOf, type Outbox } from '../webhooks.js';
import { sqliteRedeliver } from './redeliver.js';
import { sqliteRead, type SqliteAccess } from './writer.js';

const STATE = { delivered: 'delivered', retry: 'pending', failed: 'failed' } as const;

const CLAIMABLE = claimable('@now');

/** The dispatcher's statements: reads on the read connection, changes through the writer. */
export function sqliteOutbox(access: SqliteAccess): Outbox {
  const { read, write, writer } = access;
  const s = {
    // A read: a dispatcher polling every second does not write while nothing is due.
    endpointsDue: read.prepare<{ now: number }, { id: string; due: bigint }>(
      `SELECT e.id, EXISTS (SELECT 1 FROM deliveries d WHERE d.endpoint_id = e.id AND ${CLAIMABLE}) AS due
       FROM webhook_endpoints e WHERE e.enabled = 1 ORDER BY e.created_at, e.id`,
    ),
    countPending: read.prepare<[], { n: bigint }>("SELECT count(*) AS n FROM deliveries WHERE state = 'pending'"),
    pendingByEndpoint: read.prepare<[], { id: string; n: bigint }>(
      `SELECT e.id, (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending') AS n
       FROM webhook_endpoints e`,
    ),
    claim: write.prepare<
      { now: number; lease: number; endpoint: string; limit: number },
      { event_seq: bigint; endpoint_id: string; attempts: bigint; redelivered_at: bigint | null }
    >(
      `UPDATE deliveries SET locked_until = @lease WHERE rowid IN (
         SELECT d.rowid FROM deliveries d
         WHERE d.endpoint_id = @endpoint AND ${CLAIMABLE}
         ORDER BY d.next_attempt_at, d.event_seq LIMIT @limit)
         AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = @endpoint AND e.enabled = 1)
       RETURNING event_seq, endpoint_id, attempts, redelivered_at`,
    ),
    details: write.prepare<
      [bigint, string],
      { id: string; type: string; plant_id: bigint; body: string; created_at: bigint; url: string; secret: string }
    >(
      `SELECT ${eventIdOf('ev')} AS id, ev.type, ev.plant_id, ev.body, ev.created_at, e.url, e.secret
       FROM changes ev, webhook_endpoints e WHERE ev.seq = ? AND e.id = ?`,
    ),
    record: write.prepare(
      `UPDATE deliveries SET state = @state, attempts = attempts + 1, next_attempt_at = @next, locked_until = NULL,
         last_status = @status, last_error = @error, last_attempt_at = @at,
         finished_at = CASE WHEN @state = 'pending' THEN NULL ELSE @at END
       WHERE endpoint_id = @endpoint AND event_seq = @seq`,
    ),
    failure: write.prepare('UPDATE webhook_endpoints SET last_failure = ?, last_failure_at = ? WHERE id = ?'),
    disable: write.prepare('UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ? WHERE id = ?'),
    giveUpPending: write.prepare(
      `UPDATE deliveries SET state = 'failed', locked_until = NULL, last_error = coalesce(last_error, ?), finished_at = ?
       WHERE endpoint_id = ? AND state = 'pending'`,
    ),
  };

  return {
    ...sqliteRedeliver(access),
    endpointsDue: (now) =>
      sqliteRead(() => {
        const rows = s.endpointsDue.all({ now });
        return { enabled: rows.length, due: rows.filter((r) => r.due === 1n).map((r) => r.id) };
      }),
    countPendingDeliveries: () => sqliteRead(() => Number(s.countPending.get()!.n)),
    pendingByEndpoint: () =>
      sqliteRead(() => new Map(s.pendingByEndpoint.all().map((r) => [r.id, Number(r.n)] as const))),
    async claimDeliveries(now, lease, limits) {
      if (limits.size === 0) return [];
      return writer.run(() => {
        // Up to its limit of each endpoint's claimable deliveries, the earliest due first.
        const claimed = [...limits].flatMap(([endpoint, limit]) => s.claim.all({ now, lease, endpoint, limit }));
        return claimed.map((c) => {
          const d = s.details.get(c.event_seq, c.endpoint_id)!;
          return {
            eventSeq: c.event_seq,
            eventId: d.id,
            type: d.type as EventType,
            plantId: d.plant_id,
            body: d.body,
            eventCreatedAt: Number(d.created_at),
            windowFrom: Number(c.redelivered_at ?? d.created_at),
            endpointId: c.endpoint_id,
            url: d.url,
            secret: d.secret,
            attempts: Number(c.attempts),
          };
        });
      });
    },
    recordAttempt: (r) =>
      writer.run(() => {
        s.record.run({
          state: STATE[r.outcome],
          next: r.nextAttemptAt,
          status: r.status,
          error: r.error,
          at: r.at,
          endpoint: r.endpointId,
          seq: r.eventSeq,
        });
        if (r.reason !== null) s.failure.run(r.reason, r.at, r.endpointId);
        if (r.disableEndpoint !== null) {
          s.disable.run(r.disableEndpoint, r.endpointId);
          s.giveUpPending.run(r.disableEndpoint, r.at, r.endpointId);
        }
      }),
  };
}
