import type { AttemptResult, DueDelivery, EndpointStatus, EndpointsDue, WebhookEndpoint } from '../domain/webhook.js';

/** The subscribers: `webhook add`, `list` and `remove`. */
export interface WebhookEndpoints {
  insertEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  /** Every endpoint, oldest first, with its delivery figures and its `recent` latest attempts. */
  listEndpoints(recent: number): Promise<EndpointStatus[]>;
  /** Resolves to false when no endpoint has this id; its pending deliveries go with it. */
  removeEndpoint(id: string): Promise<boolean>;
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
  /** One attempt's outcome; one that disables its endpoint gives up the endpoint's pending deliveries. */
  recordAttempt(result: AttemptResult): Promise<void>;
  countPendingDeliveries(): Promise<number>;
}

/** Webhook endpoints and their outbox: one kind, since every delivery belongs to an endpoint. */
export type WebhookStore = WebhookEndpoints & Outbox;

/**
 * The condition, in SQL both stores run, on a delivery `d` the dispatcher may claim at `now` (a
 * placeholder): pending, due, not leased, and the oldest pending one of its plant for its
 * endpoint (order per plant).
 */
export const claimable = (now: string) => `d.state = 'pending' AND d.next_attempt_at <= ${now}
  AND (d.locked_until IS NULL OR d.locked_until <= ${now})
  AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.endpoint_id = d.endpoint_id AND p.plant_id = d.plant_id
                  AND p.state = 'pending' AND p.event_seq < d.event_seq)`;

/**
 * The Standard Webhooks `webhook-id` of the change in row `ev` of the log, in SQL both stores
 * run: `msg_` and its position, stable across every attempt and every endpoint, and across stores,
 * since a new log's positions start past an older one's. Events from before the change log keep
 * the random ids they were given.
 */
export const eventIdOf = (ev: string) => `coalesce(${ev}.id, 'msg_' || ${ev}.seq)`;
