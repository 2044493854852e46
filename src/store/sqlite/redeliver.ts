import type { DeliveryState, Redelivery } from '../../domain/webhook.js';
import { deliveriesOfEvent, eventLookup, type Outbox } from '../webhooks.js';
import type { SqliteAccess } from './writer.js';

interface FoundRow {
  event_seq: bigint;
  endpoint_id: string;
  event_id: string;
  state: string;
  disabled_reason: string | null;
}

const found = (where: string) => deliveriesOfEvent(where, '@endpoint');

/** `webhook redeliver` on the SQLite store: found and put back in one write transaction. */
export function sqliteRedeliver({ write, writer }: SqliteAccess): Pick<Outbox, 'redeliver'> {
  const s = {
    // A new change by its position, the key; an event from before the change log by its id.
    byPosition: write.prepare<{ key: bigint; endpoint: string | null }, FoundRow>(
      found('ev.seq = @key AND ev.id IS NULL'),
    ),
    byId: write.prepare<{ key: string; endpoint: string | null }, FoundRow>(found('ev.id = @key')),
    queue: write.prepare<{ now: number; seq: bigint; endpoint: string }>(
      `UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = @now, locked_until = NULL,
         finished_at = NULL, redelivered_at = @now
       WHERE endpoint_id = @endpoint AND event_seq = @seq AND state = 'failed'`,
    ),
  };
  return {
    redeliver: ({ eventId, endpointId }, now) =>
      writer.run(() => {
        const lookup = eventLookup(eventId);
        const endpoint = endpointId ?? null;
        const rows =
          'position' in lookup
            ? s.byPosition.all({ key: lookup.position, endpoint })
            : s.byId.all({ key: lookup.id, endpoint });
        return rows.map((r): Redelivery => {
          const queued =
            r.state === 'failed' &&
            r.disabled_reason === null &&
            s.queue.run({ now, seq: r.event_seq, endpoint: r.endpoint_id }).changes === 1;
          return {
            endpointId: r.endpoint_id,
            eventId: r.event_id,
            state: r.state as DeliveryState,
            endpointDisabled: r.disabled_reason,
            queued,
          };
        });
      }),
  };
}
