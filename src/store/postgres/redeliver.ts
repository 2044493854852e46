import type { DeliveryState, Redelivery } from '../../domain/webhook.js';
import { deliveriesOfEvent, eventLookup, type Outbox } from '../webhooks.js';
import type { Run } from './rows.js';

interface FoundRow {
  event_seq: string;
  endpoint_id: string;
  event_id: string;
  state: string;
  disabled_reason: string | null;
}

/**
 * `webhook redeliver` on the PostgreSQL store, in one transaction: the deliveries found are
 * locked, so a dispatcher recording an attempt of one (or a 410 giving them up) waits for the
 * transaction, or the transaction for it and then reads its outcome.
 */
export function postgresRedeliver(
  transaction: <T>(work: (run: Run) => Promise<T>) => Promise<T>,
): Pick<Outbox, 'redeliver'> {
  return {
    redeliver: ({ eventId, endpointId }, now) =>
      transaction(async (run) => {
        const lookup = eventLookup(eventId);
        // A new change by its position, the key; an event from before the change log by its id.
        const [where, key] =
          'position' in lookup ? ['ev.seq = $1 AND ev.id IS NULL', String(lookup.position)] : ['ev.id = $1', lookup.id];
        const rows = await run<FoundRow>({
          text: `${deliveriesOfEvent(where, '$2::text')} FOR UPDATE OF d`,
          values: [key, endpointId ?? null],
        });
        const queue = rows.filter((r) => r.state === 'failed' && r.disabled_reason === null);
        if (queue.length > 0) {
          await run({
            text: `UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, locked_until = NULL,
                     finished_at = NULL, redelivered_at = $1
                   WHERE (event_seq, endpoint_id) IN (SELECT * FROM unnest($2::bigint[], $3::text[]))`,
            values: [String(now), queue.map((r) => r.event_seq), queue.map((r) => r.endpoint_id)],
          });
        }
        return rows.map((r): Redelivery => ({
          endpointId: r.endpoint_id,
          eventId: r.event_id,
          state: r.state as DeliveryState,
          endpointDisabled: r.disabled_reason,
          queued: queue.includes(r),
        }));
      }),
  };
}
