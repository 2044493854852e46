import type { EventType } from '../../domain/webhook.js';
import type { WebhookStore } from '../webhooks.js';
import { sqliteOutbox } from './outbox.js';
import { sqliteRead, type SqliteAccess } from './writer.js';

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

/** Event types as stored: one string, separated by spaces. */
export const eventsFromColumn = (events: string) => events.split(' ').filter(Boolean) as EventType[];

/** The webhook endpoints of the SQLite store, and their outbox (outbox.ts). */
export function sqliteWebhooks(access: SqliteAccess): WebhookStore {
  const { read, write, writer } = access;
  const s = {
    list: read.prepare<[], EndpointRow>(
      `SELECT e.id, e.url, e.events, e.enabled, e.disabled_reason, e.created_at,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending') AS pending,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'delivered') AS delivered,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed') AS failed
       FROM webhook_endpoints e ORDER BY e.created_at, e.id`,
    ),
    recent: read.prepare<[string, number], RecentRow>(
      `SELECT ev.id AS event_id, ev.type, d.state, d.attempts, d.last_status, d.last_error, d.last_attempt_at
       FROM deliveries d JOIN events ev ON ev.seq = d.event_seq
       WHERE d.endpoint_id = ? AND d.attempts > 0 ORDER BY d.last_attempt_at DESC LIMIT ?`,
    ),
    insert: write.prepare(
      'INSERT INTO webhook_endpoints (id, url, events, secret, enabled, created_at) VALUES (?, ?, ?, ?, 1, ?)',
    ),
    remove: write.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
  };
  return {
    insertEndpoint: (e) =>
      writer.run(() => void s.insert.run(e.id, e.url, e.events.join(' '), e.secret, e.createdAt.getTime())),
    removeEndpoint: (id) => writer.run(() => s.remove.run(id).changes === 1),
    listEndpoints: (recent) =>
      sqliteRead(() =>
        s.list.all().map((e) => ({
          endpoint: {
            id: e.id,
            url: e.url,
            events: eventsFromColumn(e.events),
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
        })),
      ),
    ...sqliteOutbox(access),
  };
}
