import { randomBytes } from 'node:crypto';
import { writeJson } from '../json/write-json.js';
import type { PlantRecord } from '../store/store.js';

export const EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One change to announce, written in the same transaction as the change (the outbox). */
export interface NewEvent {
  /** The Standard Webhooks `webhook-id`: stable across every attempt and every endpoint. */
  id: string;
  type: EventType;
  plantId: bigint;
  /** The JSON body, written once with exact ids: `{id, name, tag?}`. */
  body: string;
  createdAt: number;
}

export function newEvent(type: EventType, plant: PlantRecord, now = Date.now()): NewEvent {
  const body = writeJson(plant.tag === undefined ? { id: plant.id, name: plant.name } : plant);
  return { id: `msg_${randomBytes(16).toString('base64url')}`, type, plantId: plant.id, body, createdAt: now };
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

/** A delivery the dispatcher has claimed (leased) and must attempt now. */
export interface DueDelivery {
  eventSeq: bigint;
  eventId: string;
  type: EventType;
  plantId: bigint;
  body: string;
  eventCreatedAt: number;
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
  /** delivered: 2xx; retry: again at nextAttemptAt; failed: given up (window over, or endpoint gone). */
  outcome: 'delivered' | 'retry' | 'failed';
  nextAttemptAt: number;
  /** 410 Gone: disable the endpoint and give up its pending deliveries. */
  disableEndpoint: string | null;
}

/** The outbox and endpoints as each store keeps them. */
export interface WebhookStore {
  insertEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  listEndpoints(recent: number): Promise<EndpointStatus[]>;
  /** Resolves to false when no endpoint has this id; its pending deliveries go with it. */
  removeEndpoint(id: string): Promise<boolean>;
  /**
   * Leases up to `limit` due deliveries until `leaseUntil`: pending, due, not leased, on an
   * enabled endpoint, and the oldest pending one of its plant for its endpoint (order per plant).
   */
  claimDeliveries(now: number, leaseUntil: number, limit: number): Promise<DueDelivery[]>;
  recordAttempt(result: AttemptResult): Promise<void>;
  countPendingDeliveries(): Promise<number>;
  /** Deletes events older than `before` that have no pending delivery, with their deliveries; resolves to how many. */
  pruneEvents(before: number): Promise<number>;
}
