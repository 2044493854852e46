import type Database from 'better-sqlite3';
import { claimable } from '../claimable.js';
import type { AttemptResult, DueDelivery, EventType, NewEvent, WebhookEndpoint } from '../../domain/webhook.js';

const STATE = { delivered: 'delivered', retry: 'pending', failed: 'failed' } as const;

export const CLAIMABLE = claimable('@now');

/**
 * The outbox's writes, run by the writer inside its transaction: an event is committed with the
 * change it announces, or not at all.
 */
export function webhookWrites(db: Database.Database) {
  const subscribed = `EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled = 1 AND instr(' ' || events || ' ', ' ' || @type || ' ') > 0)`;
  const s = {
    // No subscriber for this type: nothing to deliver, so no row (the outbox stays small).
    insertEvent: db.prepare(
      `INSERT INTO events (id, type, plant_id, body, created_at) SELECT @id, @type, @plantId, @body, @createdAt WHERE ${subscribed}`,
    ),
    insertDeliveries: db.prepare(
      `INSERT INTO deliveries (event_seq, endpoint_id, plant_id, next_attempt_at)
       SELECT @seq, id, @plantId, @createdAt FROM webhook_endpoints
       WHERE enabled = 1 AND instr(' ' || events || ' ', ' ' || @type || ' ') > 0`,
    ),
    insertEndpoint: db.prepare(
      'INSERT INTO webhook_endpoints (id, url, events, secret, enabled, created_at) VALUES (?, ?, ?, ?, 1, ?)',
    ),
    removeEndpoint: db.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
    claim: db.prepare<
      { now: number; lease: number; endpoint: string; limit: number },
      { event_seq: bigint; endpoint_id: string; attempts: bigint }
    >(
      `UPDATE deliveries SET locked_until = @lease WHERE rowid IN (
         SELECT d.rowid FROM deliveries d
         WHERE d.endpoint_id = @endpoint AND ${CLAIMABLE}
         ORDER BY d.next_attempt_at, d.event_seq LIMIT @limit)
         AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = @endpoint AND e.enabled = 1)
       RETURNING event_seq, endpoint_id, attempts`,
    ),
    details: db.prepare<
      [bigint, string],
      { id: string; type: string; plant_id: bigint; body: string; created_at: bigint; url: string; secret: string }
    >(
      `SELECT ev.id, ev.type, ev.plant_id, ev.body, ev.created_at, e.url, e.secret
       FROM events ev, webhook_endpoints e WHERE ev.seq = ? AND e.id = ?`,
    ),
    record: db.prepare(
      `UPDATE deliveries SET state = @state, attempts = attempts + 1, next_attempt_at = @next, locked_until = NULL,
         last_status = @status, last_error = @error, last_attempt_at = @at,
         finished_at = CASE WHEN @state = 'pending' THEN NULL ELSE @at END
       WHERE endpoint_id = @endpoint AND event_seq = @seq`,
    ),
    disable: db.prepare('UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ? WHERE id = ?'),
    prune: db.prepare(
      `DELETE FROM events WHERE created_at < ?
         AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = events.seq AND d.state = 'pending')`,
    ),
    giveUpPending: db.prepare(
      `UPDATE deliveries SET state = 'failed', locked_until = NULL, last_error = coalesce(last_error, ?), finished_at = ?
       WHERE endpoint_id = ? AND state = 'pending'`,
    ),
  };

  return {
    emit(ev: NewEvent): void {
      const { type, plantId, createdAt } = ev;
      const r = s.insertEvent.run({ id: ev.id, type, plantId, body: ev.body, createdAt });
      if (r.changes === 1) s.insertDeliveries.run({ seq: r.lastInsertRowid, type, plantId, createdAt });
    },
    insertEndpoint(e: WebhookEndpoint): void {
      s.insertEndpoint.run(e.id, e.url, e.events.join(' '), e.secret, e.createdAt.getTime());
    },
    removeEndpoint(id: string): boolean {
      return s.removeEndpoint.run(id).changes === 1;
    },
    /** Up to its limit of each endpoint's claimable deliveries, the earliest due first. */
    claim(now: number, lease: number, limits: ReadonlyMap<string, number>): DueDelivery[] {
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
          endpointId: c.endpoint_id,
          url: d.url,
          secret: d.secret,
          attempts: Number(c.attempts),
        };
      });
    },
    prune(before: number): number {
      return s.prune.run(before).changes;
    },
    record(r: AttemptResult): void {
      s.record.run({
        state: STATE[r.outcome],
        next: r.nextAttemptAt,
        status: r.status,
        error: r.error,
        at: r.at,
        endpoint: r.endpointId,
        seq: r.eventSeq,
      });
      if (r.disableEndpoint !== null) {
        s.disable.run(r.disableEndpoint, r.endpointId);
        s.giveUpPending.run(r.disableEndpoint, r.at, r.endpointId);
      }
    },
  };
}
