import pg, { type PoolConfig } from 'pg';

// The hosts of a postgres:// URL (parsed where the settings validate it: config/database-url.ts).
export { parseHosts, type PostgresHost } from '../../config/database-url.js';

/**
 * What a probe of one host may take, connection included. A host that does not answer in this
 * time is not the primary for now: the next round asks it again.
 */
export const PROBE_TIMEOUT_MS = 1_000;

/** True when the host answers as a primary; otherwise what it answered, for the operator. */
async function isPrimary(pool: PoolConfig, connectionString: string): Promise<true | string> {
  const client = new pg.Client({
    ...pool,
    connectionString,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS,
    statement_timeout: PROBE_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
    return rows[0]?.standby === false || 'a standby';
  } catch (err) {
    return err instanceof Error ? err.message || String((err as { code?: unknown }).code) : String(err);
  } finally {
    void client.end().catch(() => undefined);
  }
}

/**
 * The first of `hosts`, in their order, that answers as a primary (not in recovery), if any, and
 * what the others answered. All are asked at once, so a host that does not answer delays the
 * answer by one probe's time-out, not one per host.
 */
export async function findPrimary<H extends { name: string; connectionString: string }>(
  pool: PoolConfig,
  hosts: readonly H[],
): Promise<{ primary: H | undefined; answers: string }> {
  const answers = await Promise.all(hosts.map((h) => isPrimary(pool, h.connectionString)));
  return {
    primary: hosts.find((_, i) => answers[i] === true),
    answers: hosts.map((h, i) => `${h.name}: ${answers[i] === true ? 'the primary' : answers[i]}`).join('; '),
  };
}
