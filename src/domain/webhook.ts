import { plantJson, type PlantRecord } from './plant.js';

export const EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The type of what `webhook test` sends: no plant changed, so it is in no change log and no
 * outbox, and an endpoint receives it whatever types it subscribes to.
 */
export const TEST_EVENT_TYPE = 'webhook.test';

/** A test event's body: its type, the endpoint it was sent to, and when (RFC 3339). */
export const testEventBody = (endpointId: string, at: Date) =>
  JSON.stringify({ type: TEST_EVENT_TYPE, endpoint: endpointId, time: at.toISOString() });

/**
 * One change, written to the change log in the same transaction as the change: the feed serves
 * it, and the outbox delivers it to the endpoints that subscribe to its type.
 */
export interface NewEvent {
  type: EventType;
  plantId: bigint;
  /** The JSON body, written once with exact ids: `{id, name, tag?}`. */
  body: string;
  /** The plant's tag in `body`, and the one it had before when an update changed it (the feed's tag filter). */
  tag: string | null;
  oldTag: string | null;
  createdAt: number;
}

/** The change of `plant` (as it is after the change, or as it was for a deletion); `before`, an update's. */
export function newEvent(type: EventType, plant: PlantRecord, now = Date.now(), before?: PlantRecord): NewEvent {
  const tag = plant.tag ?? null;
  const oldTag = before && before.tag !== plant.tag ? (before.tag ?? null) : null;
  return { type, plantId: plant.id, body: plantJson(plant), tag, oldTag, createdAt: now };
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: EventType[];
  /** As stored: `whsec_<base64>`, or that sealed with WEBHOOK_SECRET_KEY. Printed once by `webhook add`, never logged. */
  secret: string;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: Date;
}

/** An endpoint with its delivery figures, for `webhook list`. */
export interface EndpointStatus {
  endpoint: Omit<WebhookEndpoint, 'secret'>;
  pending: number;
  delivered: number;
  failed: number;
  /** Why its last failed attempt failed, in a few words (`HTTP 500`, `timeout`), and when; null if none has. */
  lastFailure: { reason: string; at: Date } | null;
  /** Latest attempts, newest first. */
  recent: {
    eventId: string;
    type: string;
    state: string;
    attempts: number;
    status: number | null;
    error: string | null;
    at: Date | null;
  }[];
}

/** The enabled endpoints, and those with deliveries the dispatcher may claim now. */
export interface EndpointsDue {
  enabled: number;
  /** Ids, oldest endpoint first. */
  due: string[];
}

/** A delivery the dispatcher has claimed (leased) and must attempt now. */
export interface DueDelivery {
  eventSeq: bigint;
  eventId: string;
  type: EventType;
  plantId: bigint;
  body: string;
  eventCreatedAt: number;
  /** When its retry window started: its event's time, or when `webhook redeliver` sent it again. */
  windowFrom: number;
  endpointId: string;
  url: string;
  /** As stored (see WebhookEndpoint.secret). */
  secret: string;
  attempts: number;
}

/** What one attempt decided. */
export interface AttemptResult {
  eventSeq: bigint;
  endpointId: string;
  at: number;
  status: number | null;
  error: string | null;
  /** A failed attempt's reason in a few words, kept by its endpoint (`webhook list`); null when delivered. */
  reason: string | null;
  /** delivered: 2xx; retry: again at nextAttemptAt; failed: given up (window over, or endpoint gone). */
  outcome: 'delivered' | 'retry' | 'failed';
  nextAttemptAt: number;
  /** 410 Gone: disable the endpoint and give up its pending deliveries. */
  disableEndpoint: string | null;
}

/** Where a delivery stands: pending (due, or retried later), delivered, or failed (given up). */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** A delivery `webhook redeliver` found, as it was, and whether it put it back in the outbox. */
export interface Redelivery {
  endpointId: string;
  /** Its `webhook-id`. */
  eventId: string;
  state: DeliveryState;
  /** Why its endpoint is disabled (a disabled endpoint is sent nothing), or null. */
  endpointDisabled: string | null;
  queued: boolean;
}
