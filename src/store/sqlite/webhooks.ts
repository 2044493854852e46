import type Database from 'better-sqlite3';
import type { EventType, WebhookEndpoint } from '../../domain/webhook.js';
import type { RecordsInBackup } from '../backup.js';
import { eventIdOf, type WebhookStore } from '../webhooks.js';
import { sqliteOutbox } from './outbox.js';
import { sqliteRead, type SqliteAccess } from './writer.js';

interface EndpointRow {
  id: string;
  url: string;
  events: string;
  enabled: bigint;
  disabled_reason: string | null;
  created_at: bigint;
  last_failure: string | null;
  last_failure_at: bigint | null;
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
const eventsFromColumn = (events: string) => events.split(' ').filter(Boolean) as EventType[];

interface StoredEndpointRow {
  id: string;
  url: string;
  events: string;
  secret: string;
  enabled: bigint;
  disabled_reason: string | null;
  created_at: bigint;
}

/** An endpoint as `webhook add` made it and a backup holds it (not its deliveries' outcomes). */
const STORED_COLUMNS = 'id, url, events, secret, enabled, disabled_reason, created_at';

const storedEndpoint = (e: StoredEndpointRow): WebhookEndpoint => ({
  id: e.id,
  url: e.url,
  events: eventsFromColumn(e.events),
  secret: e.secret,
  enabled: e.enabled === 1n,
  disabledReason: e.disabled_reason,
  createdAt: new Date(Number(e.created_at)),
});

/** The webhook endpoints of the SQLite store, and their outbox (outbox.ts). */
export function sqliteWebhooks(access: SqliteAccess): WebhookStore {
  const { read, write, writer } = access;
  const s = {
    list: read.prepare<[], EndpointRow>(
      `SELECT e.id, e.url, e.events, e.enabled, e.disabled_reason, e.created_at, e.last_failure, e.last_failure_at,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending') AS pending,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'delivered') AS delivered,
         (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed') AS failed
       FROM webhook_endpoints e ORDER BY e.created_at, e.id`,
    ),
    recent: read.prepare<[string, number], RecentRow>(
      `SELECT ${eventIdOf('ev')} AS event_id, ev.type, d.state, d.attempts, d.last_status, d.last_error, d.last_attempt_at
       FROM deliveries d JOIN changes ev ON ev.seq = d.event_seq
       WHERE d.endpoint_id = ? AND d.attempts > 0 ORDER BY d.last_attempt_at DESC LIMIT ?`,
    ),
    insert: write.prepare(
      'INSERT INTO webhook_endpoints (id, url, events, secret, enabled, created_at) VALUES (?, ?, ?, ?, 1, ?)',
    ),
    remove: write.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
    find: read.prepare<[string], StoredEndpointRow>(`SELECT ${STORED_COLUMNS} FROM webhook_endpoints WHERE id = ?`),
  };
  return {
    insertEndpoint: (e) =>
      writer.run(() => void s.insert.run(e.id, e.url, e.events.join(' '), e.secret, e.createdAt.getTime())),
    removeEndpoint: (id) => writer.run(() => s.remove.run(id).changes === 1),
    findEndpoint: (id) =>
      sqliteRead(() => {
        const row = s.find.get(id);
        return row && storedEndpoint(row);
      }),
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
          lastFailure:
            e.last_failure === null ? null : { reason: e.last_failure, at: new Date(Number(e.last_failure_at)) },
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

/**
 * Endpoints in a backup, with their state (enabled or not, and why) and their secrets as stored;
 * not their last failure, which is of deliveries a backup does not hold.
 */
export const endpointsInBackup: RecordsInBackup<WebhookEndpoint, Database.Database> = {
  tables: ['webhook_endpoints'],
  snapshot(db) {
    const list = db.prepare<[], StoredEndpointRow>(
      `SELECT ${STORED_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`,
    );
    return {
      async *pages() {
        yield list.all().map(storedEndpoint);
      },
    };
  },
  restore(db) {
    const s = {
      count: db.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM webhook_endpoints'),
      insert: db.prepare(`INSERT INTO webhook_endpoints (${STORED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    };
    return {
      count: async () => Number(s.count.get()!.n),
      async insert(endpoints) {
        for (const e of endpoints) {
          const enabled = e.enabled ? 1 : 0;
          s.insert.run(e.id, e.url, e.events.join(' '), e.secret, enabled, e.disabledReason, e.createdAt.getTime());
        }
        return endpoints.length;
      },
    };
  },
};
