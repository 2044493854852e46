import type {
  AttemptResult,
  DueDelivery,
  EndpointStatus,
  EndpointsDue,
  Redelivery,
  WebhookEndpoint,
} from '../domain/webhook.js';

/** The subscribers: `webhook add`, `list` and `remove`. */
export interface WebhookEndpoints {
  insertEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  /** Every endpoint, oldest first, with its delivery figures and its `recent` latest attempts. */
  listEndpoints(recent: number): Promise<EndpointStatus[]>;
  /** Resolves to false when no endpoint has this id; its pending deliveries go with it. */
  removeEndpoint(id: string): Promise<boolean>;
  /** The endpoint with this id, its secret as stored, or undefined (`webhook test`). */
  findEndpoint(id: string): Promise<WebhookEndpoint | undefined>;
}

/**
 * The outbox: the deliveries of the changes plant writes log (written by the write path, in the
 * same transaction: write-path.ts), one per change and subscribed endpoint, as the dispatcher
 * claims, attempts and records them. The changes themselves are the change log's (changes.ts),
 * which prunes them.
 */
export interface Outbox {
  /**
   * The enabled endpoints, and those with a delivery that can be claimed now: pending, due, not
   * leased, and the oldest pending one of its plant for its endpoint (order per plant).
   */
  endpointsDue(now: number): Promise<EndpointsDue>;
  /**
   * Leases until `leaseUntil`, for each endpoint in `limits`, up to its number of deliveries that
   * can be claimed now (see endpointsDue), the earliest due first; none of a disabled endpoint.
   */
  claimDeliveries(now: number, leaseUntil: number, limits: ReadonlyMap<string, number>): Promise<DueDelivery[]>;
  /**
   * One attempt's outcome; one that disables its endpoint gives up the endpoint's pending
   * deliveries. A failed attempt's reason and time become its endpoint's last failure.
   */
  recordAttempt(result: AttemptResult): Promise<void>;
  countPendingDeliveries(): Promise<number>;
  /** Every endpoint's id and its pending deliveries (none: 0). */
  pendingByEndpoint(): Promise<Map<string, number>>;
  /**
   * `webhook redeliver`: the deliveries of the event with this webhook-id (to `endpointId` only,
   * when given), each as it was, oldest endpoint first. Those given up whose endpoint is enabled
   * are put back in the outbox at once: due `now`, a new retry window from `now`, their attempts
   * counted from none, and `queued`.
   */
  redeliver(target: { eventId: string; endpointId?: string }, now: number): Promise<Redelivery[]>;
}

/** Webhook endpoints and their outbox: one kind, since every delivery belongs to an endpoint. */
export type WebhookStore = WebhookEndpoints & Outbox;

/**
 * The condition, in SQL both stores run, on a delivery `d` the dispatcher may claim at `now` (a
 * placeholder): pending, due, not leased, and the oldest pending one of its plant for its
 * endpoint (order per plant).
 *
 * The oldest as a min(), not as "no older one exists": the min() can only be read from
 * deliveries_order (endpoint, plant, position), one index entry a delivery. PostgreSQL, asked
 * whether an older one exists on a table it has no statistics of yet (a burst within a minute of
 * a new store, a promoted standby), chose the endpoint's due index instead and read every pending
 * delivery of the endpoint for each one: with 3,000 pending, half a second a look, and the
 * dispatcher fell further behind the more there was to send.
 */
export const claimable = (now: string) => `d.state = 'pending' AND d.next_attempt_at <= ${now}
  AND (d.locked_until IS NULL OR d.locked_until <= ${now})
  AND d.event_seq = (SELECT min(p.event_seq) FROM deliveries p
                     WHERE p.endpoint_id = d.endpoint_id AND p.plant_id = d.plant_id AND p.state = 'pending')`;

/**
 * The Standard Webhooks `webhook-id` of the change in row `ev` of the log, in SQL both stores
 * run: `msg_` and its position, stable across every attempt and every endpoint, and across stores,
 * since a new log's positions start past an older one's. Events from before the change log keep
 * the random ids they were given.
 */
export const eventIdOf = (ev: string) => `coalesce(${ev}.id, 'msg_' || ${ev}.seq)`;

/**
 * How a store finds the event with a webhook-id: a new change's (`msg_<position>`, an int64) by
 * its position, the key; an event from before the change log by the id it was given.
 */
export function eventLookup(eventId: string): { position: bigint } | { id: string } {
  const digits = /^msg_([1-9][0-9]{0,18})$/.exec(eventId)?.[1];
  return digits !== undefined && BigInt(digits) <= 2n ** 63n - 1n ? { position: BigInt(digits) } : { id: eventId };
}

/**
 * The deliveries of the events `where` matches (on row `ev`), to the endpoint `endpoint` names or,
 * when that is null, to every one, oldest endpoint first, in SQL both stores run (`webhook
 * redeliver`): each with its event's webhook-id, its state, and why its endpoint is disabled.
 */
export const deliveriesOfEvent = (where: string, endpoint: string) =>
  `SELECT d.event_seq, d.endpoint_id, ${eventIdOf('ev')} AS event_id, d.state,
     CASE WHEN e.enabled THEN NULL ELSE coalesce(e.disabled_reason, 'disabled') END AS disabled_reason
   FROM changes ev JOIN deliveries d ON d.event_seq = ev.seq JOIN webhook_endpoints e ON e.id = d.endpoint_id
   WHERE ${where} AND (${endpoint} IS NULL OR d.endpoint_id = ${endpoint})
   ORDER BY e.created_at, e.id`;
