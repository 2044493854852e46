import type { PoolClient, QueryConfig } from 'pg';
import { newerSchema } from '../schema-version.js';

/**
 * Versioned schema changes, applied in order; `schema_migrations` records which ran. Never edit
 * a released entry: append a new one. The tables mirror the SQLite store's: int64 ids as bigint,
 * strings as text (NUL, which text cannot hold, is refused by the API before it gets here).
 */
export const postgresMigrations: string[] = [
  `CREATE TABLE plants (
     id   bigint PRIMARY KEY,
     name text NOT NULL,
     tag  text
   );
   CREATE TABLE tokens (
     id         text PRIMARY KEY,
     name       text NOT NULL,
     hash       text NOT NULL UNIQUE,
     prefix     text NOT NULL,
     scopes     text[] NOT NULL,
     created_at timestamptz NOT NULL,
     expires_at timestamptz,
     revoked_at timestamptz
   );`,
  // Webhooks: endpoints, the outbox of events, and one delivery row per event and endpoint.
  // Times are epoch milliseconds (bigint), as in the SQLite store, so the dispatcher reads both alike.
  `CREATE TABLE webhook_endpoints (
     id              text PRIMARY KEY,
     url             text NOT NULL,
     events          text[] NOT NULL,
     secret          text NOT NULL,
     enabled         boolean NOT NULL DEFAULT true,
     disabled_reason text,
     created_at      bigint NOT NULL
   );
   CREATE TABLE events (
     seq        bigserial PRIMARY KEY,
     id         text NOT NULL UNIQUE,
     type       text NOT NULL,
     plant_id   bigint NOT NULL,
     body       text NOT NULL,
     created_at bigint NOT NULL
   );
   CREATE TABLE deliveries (
     event_seq       bigint NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
     endpoint_id     text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
     plant_id        bigint NOT NULL,
     state           text NOT NULL DEFAULT 'pending',
     attempts        integer NOT NULL DEFAULT 0,
     next_attempt_at bigint NOT NULL,
     locked_until    bigint,
     last_status     integer,
     last_error      text,
     last_attempt_at bigint,
     finished_at     bigint,
     PRIMARY KEY (endpoint_id, event_seq)
   );
   CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
   CREATE INDEX deliveries_order ON deliveries (endpoint_id, plant_id, event_seq) WHERE state = 'pending';
   CREATE INDEX deliveries_event ON deliveries (event_seq);`,
  // Tokens keep no part of an operator's own value (PLANT_STORE_TOKEN): only a managed token's
  // "pst_" and 4 of its random characters may be kept, to tell tokens apart.
  `UPDATE tokens SET prefix = ''
   WHERE name = 'bootstrap (PLANT_STORE_TOKEN)' OR substr(prefix, 1, 4) <> 'pst_' OR length(prefix) <> 8;`,
];

/** A migration may rewrite a large table: it gets far longer than a request's statement timeout. */
const MIGRATION_TIMEOUT_MS = 10 * 60_000;

/**
 * Applies the pending migrations in one transaction under an advisory lock keyed by the schema,
 * so instances starting together wait for each other and the schema is migrated once. Resolves
 * to the number applied.
 */
export async function runMigrations(client: PoolClient, schema: string | undefined): Promise<number> {
  // pg takes a per-query query_timeout (lib/client.js); @types/pg does not declare it.
  const query = (text: string, values?: unknown[]) =>
    client.query({ text, values, query_timeout: MIGRATION_TIMEOUT_MS + 5_000 } as QueryConfig);
  await query('BEGIN');
  try {
    await query(`SET LOCAL statement_timeout = ${MIGRATION_TIMEOUT_MS}`);
    const encoding = (await query('SHOW server_encoding')).rows[0] as { server_encoding: string };
    if (encoding.server_encoding !== 'UTF8') {
      throw new Error(`the PostgreSQL database must use UTF8 encoding (it uses ${encoding.server_encoding})`);
    }
    await query(
      `SELECT pg_advisory_xact_lock(hashtext('plant-store migrations ' || coalesce($1::text, current_schema()::text, '')))`,
      [schema ?? null],
    );
    // The name was checked against [a-z_][a-z0-9_]* by the configuration, so it needs no quoting.
    if (schema !== undefined) await query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await query(`CREATE TABLE IF NOT EXISTS schema_migrations (
       version    integer PRIMARY KEY,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`);
    const { rows } = await query('SELECT coalesce(max(version), 0) AS version FROM schema_migrations');
    const current = Number((rows[0] as { version: number }).version);
    if (current > postgresMigrations.length) throw newerSchema(current, postgresMigrations.length);
    const pending = postgresMigrations.slice(current);
    for (const [i, sql] of pending.entries()) {
      await query(sql);
      await query('INSERT INTO schema_migrations (version) VALUES ($1)', [current + i + 1]);
    }
    await query('COMMIT');
    return pending.length;
  } catch (err) {
    await query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
