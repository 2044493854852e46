import type { AttemptResult, DueDelivery, EndpointsDue, EventType } from '../../domain/webhook.js';
import { claimable, eventIdOf, type Outbox } from '../webhooks.js';
import { postgresRedeliver } from './redeliver.js';
import type { Run } from './rows.js';

const STATE = { delivered: 'delivered', retry: 'pending', failed: 'failed' } as const;

const CLAIMABLE = claimable('$1');

/** The dispatcher's statements; `FOR UPDATE SKIP LOCKED` lets instances share the work. */
export function postgresOutbox(run: Run, transaction: <T>(work: (run: Run) => Promise<T>) => Promise<T>): Outbox {
  return {
    ...postgresRedeliver(transaction),
    async endpointsDue(now: number): Promise<EndpointsDue> {
      // A scalar subquery with LIMIT 1 rather than EXISTS: PostgreSQL may answer an EXISTS for
      // every endpoint at once, by reading every due delivery (and checking its plant's order),
      // which it chose on a table without statistics (0.3 s a look with 50,000 pending). This
      // form is run endpoint by endpoint and stops at the first delivery it may claim.
      const rows = await run<{ id: string; due: boolean }>({
        text: `SELECT e.id, (SELECT true FROM deliveries d WHERE d.endpoint_id = e.id AND ${CLAIMABLE} LIMIT 1) IS NOT NULL AS due
               FROM webhook_endpoints e WHERE e.enabled ORDER BY e.created_at, e.id`,
        values: [String(now)],
      });
      return { enabled: rows.length, due: rows.filter((r) => r.due).map((r) => r.id) };
    },
    async claimDeliveries(
      now: number,
      leaseUntil: number,
      limits: ReadonlyMap<string, number>,
    ): Promise<DueDelivery[]> {
      if (limits.size === 0) return [];
      const rows = await run<{
        event_seq: string;
        endpoint_id: string;
        attempts: number;
        redelivered_at: string | null;
        id: string;
        type: string;
        plant_id: string;
        body: string;
        created_at: string;
        url: string;
        secret: string;
      }>({
        // Each endpoint's earliest due deliveries up to its limit, skipping those another instance
        // is claiming; the lease is checked again on the locked row.
        text: `WITH due AS (
                 SELECT x.event_seq, x.endpoint_id
                 FROM unnest($3::text[], $4::int[]) AS q (endpoint_id, n)
                 CROSS JOIN LATERAL (
                   SELECT d.event_seq, d.endpoint_id FROM deliveries d
                   WHERE d.endpoint_id = q.endpoint_id AND ${CLAIMABLE}
                     AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
                   ORDER BY d.next_attempt_at, d.event_seq LIMIT q.n
                   FOR UPDATE OF d SKIP LOCKED) x
               ), c AS (
                 UPDATE deliveries d SET locked_until = $2 FROM due
                 WHERE d.event_seq = due.event_seq AND d.endpoint_id = due.endpoint_id
                   AND (d.locked_until IS NULL OR d.locked_until <= $1)
                 RETURNING d.event_seq, d.endpoint_id, d.attempts, d.redelivered_at)
               SELECT c.event_seq, c.endpoint_id, c.attempts, c.redelivered_at, ${eventIdOf('ev')} AS id, ev.type, ev.plant_id, ev.body, ev.created_at, e.url, e.secret
               FROM c JOIN changes ev ON ev.seq = c.event_seq JOIN webhook_endpoints e ON e.id = c.endpoint_id`,
        values: [String(now), String(leaseUntil), [...limits.keys()], [...limits.values()]],
      });
      return rows.map((r) => ({
        eventSeq: BigInt(r.event_seq),
        eventId: r.id,
        type: r.type as EventType,
        plantId: BigInt(r.plant_id),
        body: r.body,
        eventCreatedAt: Number(r.created_at),
        windowFrom: Number(r.redelivered_at ?? r.created_at),
        endpointId: r.endpoint_id,
        url: r.url,
        secret: r.secret,
        attempts: r.attempts,
      }));
    },
    recordAttempt(r: AttemptResult): Promise<void> {
      return transaction(async (run) => {
        // A failure locks its endpoint's row before any delivery's, as every failure does (a 410
        // then gives up the endpoint's pending deliveries): two never wait for each other's.
        if (r.reason !== null) {
          await run({
            text: 'UPDATE webhook_endpoints SET last_failure = $1, last_failure_at = $2 WHERE id = $3',
            values: [r.reason, String(r.at), r.endpointId],
          });
        }
        await run({
          text: `UPDATE deliveries SET state = $1, attempts = attempts + 1, next_attempt_at = $2, locked_until = NULL,
                   last_status = $3, last_error = $4, last_attempt_at = $5,
                   finished_at = CASE WHEN $1 = 'pending' THEN NULL ELSE $5::bigint END
                 WHERE endpoint_id = $6 AND event_seq = $7`,
          values: [
            STATE[r.outcome],
            String(r.nextAttemptAt),
            r.status,
            r.error,
            String(r.at),
            r.endpointId,
            String(r.eventSeq),
          ],
        });
        if (r.disableEndpoint !== null) {
          await run({
            text: 'UPDATE webhook_endpoints SET enabled = false, disabled_reason = $1 WHERE id = $2',
            values: [r.disableEndpoint, r.endpointId],
          });
          await run({
            text: `UPDATE deliveries SET state = 'failed', locked_until = NULL, last_error = coalesce(last_error, $1), finished_at = $2
                   WHERE endpoint_id = $3 AND state = 'pending'`,
            values: [r.disableEndpoint, String(r.at), r.endpointId],
          });
        }
      });
    },
    async pendingByEndpoint(): Promise<Map<string, number>> {
      const rows = await run<{ id: string; n: string }>({
        text: `SELECT e.id, (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending') AS n
               FROM webhook_endpoints e`,
      });
      return new Map(rows.map((r) => [r.id, Number(r.n)]));
    },
    async countPendingDeliveries(): Promise<number> {
      const [row] = await run<{ n: string }>({
        text: "SELECT count(*) AS n FROM deliveries WHERE state = 'pending'",
      });
      return Number(row?.n ?? 0);
    },
  };
}
