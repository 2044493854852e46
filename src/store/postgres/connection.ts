import { escapeIdentifier, type PoolConfig } from 'pg';
import { ConfigError, schemaNameProblem } from '../../config/parse.js';
import { parseHosts } from '../../config/database-url.js';

/** Time to open a connection, or to wait for a free one in a busy pool, before answering 503. */
export const CONNECT_TIMEOUT_MS = 2_000;
/** The server cancels a statement after this; the client gives up a little later, for a dead link. */
export const STATEMENT_TIMEOUT_MS = 4_000;
export const QUERY_TIMEOUT_MS = 5_000;
/** A transaction left open by a vanished client must not hold its locks for long. */
export const IDLE_IN_TRANSACTION_MS = 10_000;
/**
 * What a request's store work may take, waits for a batch or a connection included, before it is
 * answered 503. docs/guides/scaling-out.md promises an answer within 5 s when the database stops answering, and a
 * request makes up to two look-ups one after the other: its token's (when the half-second cache
 * has none), then its operation. The token's is a read by key, answered at once by a database that
 * answers at all; waiting for a connection that blocked statements hold is what takes it longer.
 */
export const TOKEN_LOOKUP_BUDGET_MS = 800;
export const OPERATION_BUDGET_MS = 4_000;

export interface PostgresSettings {
  /** The pool's settings; its connectionString names the first host. */
  pool: PoolConfig;
  /** Each host DATABASE_URL names, in its order, with its own connection string (primary.ts). */
  hosts: { name: string; connectionString: string }[];
  /** The schema named by `?schema=`, created by the migrations when missing; undefined: the server's search_path. */
  schema: string | undefined;
}

/** The modes pg 8 reads as verify-full, warning (in 8 lines on stderr) that pg 9 will read them as libpq does. */
const VERIFY_FULL_ALIASES = new Set(['prefer', 'require', 'verify-ca']);

/**
 * `sslmode=require` (or prefer, verify-ca) becomes the `verify-full` pg reads it as anyway: the
 * same connection, certificate and host name checked, without pg's warning before the line that
 * says what went wrong. With `uselibpqcompat=true` pg reads them as libpq does, and does not warn.
 */
function preemptSslModeWarning(params: URLSearchParams): void {
  const mode = params.get('sslmode');
  if (mode !== null && VERIFY_FULL_ALIASES.has(mode) && params.get('uselibpqcompat') !== 'true') {
    params.set('sslmode', 'verify-full');
  }
}

/**
 * What a statement or a transaction runs under. Each is set with SET LOCAL in the same round
 * trip as the statement, or as the transaction's BEGIN, and lasts for that transaction only: the
 * store keeps no state in a server session, so a transaction-mode pooler (PgBouncer) may hand
 * each transaction to another server connection, and nothing needs a start-up parameter, which
 * such a pooler refuses (the manual, "Behind PgBouncer").
 */
export interface LocalSettings {
  /** The server cancels a statement past this (milliseconds; 0: never). */
  statementTimeoutMs: number;
  /** The server ends a transaction idle this long between two statements (0: never); a lone statement is never idle. */
  idleMs?: number;
}

/** The SET LOCAL statements that give a transaction `settings` and the store's schema (`?schema=`) as its search_path. */
export function localSettings(schema: string | undefined, { statementTimeoutMs, idleMs }: LocalSettings): string[] {
  return [
    `SET LOCAL statement_timeout = ${statementTimeoutMs}`,
    ...(schema === undefined ? [] : [`SET LOCAL search_path = ${escapeIdentifier(schema)}`]),
    ...(idleMs === undefined ? [] : [`SET LOCAL idle_in_transaction_session_timeout = ${idleMs}`]),
  ];
}

/** A transaction's first round trip: BEGIN (`begin`, with its options) and its settings, as one simple-protocol query. */
export function beginWith(schema: string | undefined, settings: LocalSettings, begin = 'BEGIN'): string {
  return [begin, ...localSettings(schema, settings)].join(';\n');
}

/**
 * Turns a validated DATABASE_URL into pool settings. `schema=` is ours, not libpq's, so it is
 * taken out of the URL; each statement and transaction sets it as its search_path (SET LOCAL:
 * localSettings). The only start-up parameter the store sends is application_name (with the
 * user, the database and pg's client_encoding): an `options=` already in the URL is kept, and is
 * the operator's to leave out behind a pooler that refuses it. Each host of a list gets the same
 * settings.
 */
export function postgresSettings(databaseUrl: string, poolSize: number): PostgresSettings {
  const hosts = parseHosts(databaseUrl);
  const url = new URL(hosts[0]!.url);
  const schema = url.searchParams.get('schema') ?? undefined;
  // Checked by the settings already; again here, where the name goes into the statements.
  const problem = schema === undefined ? undefined : schemaNameProblem(schema);
  if (problem !== undefined) throw new ConfigError(`DATABASE_URL ${problem}`);
  const options = url.searchParams.get('options');
  url.searchParams.delete('schema');
  url.searchParams.delete('options');
  preemptSslModeWarning(url.searchParams);
  const connectionString = (host: string) => Object.assign(new URL(url), { host }).toString();
  return {
    schema,
    hosts: hosts.map((h) => ({ name: h.name, connectionString: connectionString(new URL(h.url).host) })),
    pool: {
      connectionString: url.toString(),
      ...(options && { options }),
      max: poolSize,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // pg's own limit on its wait for an answer (a dead link); the server's is statement_timeout.
      query_timeout: QUERY_TIMEOUT_MS,
      // Finds a dead peer on an idle connection instead of waiting for the next query to time out.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'plant-store',
    },
  };
}
