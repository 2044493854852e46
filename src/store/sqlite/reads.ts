import type Database from 'better-sqlite3';
import type { PlantRecord } from '../../domain/plant.js';
import type { PlantListQuery } from '../../domain/plant-query.js';
import type { TokenRecord } from '../../domain/token.js';
import type { EndpointStatus, EndpointsDue, EventType } from '../../domain/webhook.js';
import { plantFromRow, tokenFromRow, type PlantRow, type TokenRow } from './connection.js';
import { sqliteFilters } from './plant-filters.js';
import { CLAIMABLE } from './webhook-writes.js';

interface EndpointRow {
  id: string;
  url: string;
  events: string;
  enabled: bigint;
  disabled_reason: string | null;
  created_at: bigint;
  pending: bigint;
  delivered: bigint;
  failed: bigint;
}

interface RecentRow {
  event_id: string;
  type: string;
  state: string;
  attempts: bigint;
  last_status: bigint | null;
  last_error: string | null;
  last_attempt_at: bigint | null;
}

const n = (v: bigint | undefined) => Number(v ?? 0);

/** The store's reads, on the read connection: WAL lets them run while a write is under way. */
export function sqliteReads(db: Database.Database) {
  const s = {
    getPlant: db.prepare<[bigint], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?'),
    listFirst: db.prepare<[number], PlantRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?'),
    listAfter: db.prepare<[bigint, number], PlantRow>(
      'SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?',
    ),
    countPlants: db.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM plants'),
    tokenByHash: db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE hash = ?'),
    listTokens: db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id'),
    countTokens: db.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM tokens'),
    endpoints: db.prepare<[], EndpointRow>(
      `SELECT e.id, e.url, e.events, e.enabled, e.disabled_reason, e.created_at,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending') AS pending,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'delivered') AS delivered,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed') AS failed
       FROM webhook_endpoints e ORDER BY e.created_at, e.id`,
    ),
    recent: db.prepare<[string, number], RecentRow>(
      `SELECT ev.id AS event_id, ev.type, d.state, d.attempts, d.last_status, d.last_error, d.last_attempt_at
       FROM deliveries d JOIN events ev ON ev.seq = d.event_seq
       WHERE d.endpoint_id = ? AND d.attempts > 0 ORDER BY d.last_attempt_at DESC LIMIT ?`,
    ),
    endpointsDue: db.prepare<{ now: number }, { id: string; due: bigint }>(
      `SELECT e.id, EXISTS (SELECT 1 FROM deliveries d WHERE d.endpoint_id = e.id AND ${CLAIMABLE}) AS due
       FROM webhook_endpoints e WHERE e.enabled = 1 ORDER BY e.created_at, e.id`,
    ),
    countPending: db.prepare<[], { n: bigint }>("SELECT count(*) AS n FROM deliveries WHERE state = 'pending'"),
  };
  const filters = sqliteFilters(db);

  return {
    getPlant(id: bigint): PlantRecord | undefined {
      const row = s.getPlant.get(id);
      return row && plantFromRow(row);
    },
    listPlants(query: PlantListQuery, limit: number): PlantRecord[] {
      const { after } = query;
      return (
        filters.listPlants(query, limit) ??
        (after === undefined ? s.listFirst.all(limit) : s.listAfter.all(after, limit)).map(plantFromRow)
      );
    },
    countPlants: () => n(s.countPlants.get()?.n),
    findTokenByHash(hash: string): TokenRecord | undefined {
      const row = s.tokenByHash.get(hash);
      return row && tokenFromRow(row);
    },
    listTokens: () => s.listTokens.all().map(tokenFromRow),
    countTokens: () => n(s.countTokens.get()?.n),
    endpointsDue(now: number): EndpointsDue {
      const rows = s.endpointsDue.all({ now });
      return { enabled: rows.length, due: rows.filter((r) => r.due === 1n).map((r) => r.id) };
    },
    countPendingDeliveries: () => n(s.countPending.get()?.n),
    listEndpoints(recent: number): EndpointStatus[] {
      return s.endpoints.all().map((e) => ({
        endpoint: {
          id: e.id,
          url: e.url,
          events: e.events.split(' ').filter(Boolean) as EventType[],
          enabled: e.enabled === 1n,
          disabledReason: e.disabled_reason,
          createdAt: new Date(Number(e.created_at)),
        },
        pending: Number(e.pending),
        delivered: Number(e.delivered),
        failed: Number(e.failed),
        recent: s.recent.all(e.id, recent).map((r) => ({
          eventId: r.event_id,
          type: r.type,
          state: r.state,
          attempts: Number(r.attempts),
          status: r.last_status === null ? null : Number(r.last_status),
          error: r.last_error,
          at: r.last_attempt_at === null ? null : new Date(Number(r.last_attempt_at)),
        })),
      }));
    },
  };
}
