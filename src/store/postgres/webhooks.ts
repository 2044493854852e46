import type { EndpointStatus, EventType, WebhookEndpoint } from '../../domain/webhook.js';
import type { RecordsInBackup } from '../backup.js';
import { eventIdOf, type WebhookStore } from '../webhooks.js';
import { postgresOutbox } from './outbox.js';
import type { Run } from './rows.js';

interface StoredEndpointRow {
  id: string;
  url: string;
  events: string[];
  secret: string;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
}

/** An endpoint as `webhook add` made it and a backup holds it (not its deliveries' outcomes). */
const STORED_COLUMNS = 'id, url, events, secret, enabled, disabled_reason, created_at';

const storedEndpoint = (e: StoredEndpointRow): WebhookEndpoint => ({
  id: e.id,
  url: e.url,
  events: e.events as EventType[],
  secret: e.secret,
  enabled: e.enabled,
  disabledReason: e.disabled_reason,
  createdAt: new Date(Number(e.created_at)),
});

/** The webhook endpoints of the PostgreSQL store, and their outbox (outbox.ts). */
export function postgresWebhooks(
  run: Run,
  transaction: <T>(work: (run: Run) => Promise<T>) => Promise<T>,
): WebhookStore {
  return {
    async insertEndpoint(e: WebhookEndpoint): Promise<void> {
      await run({
        text: 'INSERT INTO webhook_endpoints (id, url, events, secret, enabled, created_at) VALUES ($1, $2, $3, $4, true, $5)',
        values: [e.id, e.url, e.events, e.secret, String(e.createdAt.getTime())],
      });
    },
    async listEndpoints(recent: number): Promise<EndpointStatus[]> {
      const rows = await run<{
        id: string;
        url: string;
        events: string[];
        enabled: boolean;
        disabled_reason: string | null;
        created_at: string;
        last_failure: string | null;
        last_failure_at: string | null;
        pending: string;
        delivered: string;
        failed: string;
      }>({
        text: `SELECT e.id, e.url, e.events, e.enabled, e.disabled_reason, e.created_at, e.last_failure, e.last_failure_at,
                 (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending') AS pending,
                 (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'delivered') AS delivered,
                 (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed') AS failed
               FROM webhook_endpoints e ORDER BY e.created_at, e.id`,
      });
      const out: EndpointStatus[] = [];
      for (const e of rows) {
        const recentRows = await run<{
          event_id: string;
          type: string;
          state: string;
          attempts: number;
          last_status: number | null;
          last_error: string | null;
          last_attempt_at: string | null;
        }>({
          text: `SELECT ${eventIdOf('ev')} AS event_id, ev.type, d.state, d.attempts, d.last_status, d.last_error, d.last_attempt_at
                 FROM deliveries d JOIN changes ev ON ev.seq = d.event_seq
                 WHERE d.endpoint_id = $1 AND d.attempts > 0 ORDER BY d.last_attempt_at DESC LIMIT $2`,
          values: [e.id, recent],
        });
        out.push({
          endpoint: {
            id: e.id,
            url: e.url,
            events: e.events as EventType[],
            enabled: e.enabled,
            disabledReason: e.disabled_reason,
            createdAt: new Date(Number(e.created_at)),
          },
          pending: Number(e.pending),
          delivered: Number(e.delivered),
          failed: Number(e.failed),
          lastFailure:
            e.last_failure === null ? null : { reason: e.last_failure, at: new Date(Number(e.last_failure_at)) },
          recent: recentRows.map((r) => ({
            eventId: r.event_id,
            type: r.type,
            state: r.state,
            attempts: r.attempts,
            status: r.last_status,
            error: r.last_error,
            at: r.last_attempt_at === null ? null : new Date(Number(r.last_attempt_at)),
          })),
        });
      }
      return out;
    },
    async removeEndpoint(id: string): Promise<boolean> {
      return (
        (await run({ text: 'DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id', values: [id] })).length === 1
      );
    },
    async findEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
      const [row] = await run<StoredEndpointRow>({
        text: `SELECT ${STORED_COLUMNS} FROM webhook_endpoints WHERE id = $1`,
        values: [id],
      });
      return row && storedEndpoint(row);
    },
    ...postgresOutbox(run, transaction),
  };
}

/**
 * Endpoints in a backup, with their state (enabled or not, and why) and their secrets as stored;
 * not their last failure, which is of deliveries a backup does not hold.
 */
export const endpointsInBackup: RecordsInBackup<WebhookEndpoint, Run> = {
  tables: ['webhook_endpoints'],
  snapshot: (run) => ({
    async *pages() {
      const rows = await run<StoredEndpointRow>({
        text: `SELECT ${STORED_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`,
      });
      yield rows.map(storedEndpoint);
    },
  }),
  restore: (run) => ({
    async count() {
      const [row] = await run<{ n: string }>({ text: 'SELECT count(*) AS n FROM webhook_endpoints' });
      return Number(row?.n ?? 0);
    },
    async insert(endpoints) {
      for (const e of endpoints) {
        await run({
          text: `INSERT INTO webhook_endpoints (${STORED_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          values: [e.id, e.url, e.events, e.secret, e.enabled, e.disabledReason, String(e.createdAt.getTime())],
        });
      }
      return endpoints.length;
    },
  }),
};
