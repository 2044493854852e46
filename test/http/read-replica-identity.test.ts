// DATABASE_READ_URL naming a database that is not a standby of the primary, with real components:
// the suite's PostgreSQL server under another database (not in recovery), a standby of a cluster
// of this test's own (in recovery, another system identifier), and a standby whose change log is
// past the primary's: clusters made from PostgreSQL 15's binaries, where the standby the instance
// runs on was promoted without the last writes of the old primary, which the other standby has (a
// failover that lost writes). None of them may serve a read; each is one warning line, and its
// `plant_store_store_standby_usable` is 0. The instance is the app built in this process
// (test/helper.ts): what judges the read URL is its store, not its process.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { openStore } from '../../src/store/open-store.js';
import { Cluster } from '../support/clusters.js';
import { buildTestApp } from '../helper.js';
import { send } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { behindPgBouncer, POSTGRES_URL, postgresSql, suiteOptions } from '../support/stores.js';

const PRIMARY_PORT = 6491;
const KEPT_PORT = 6492;
const AHEAD_PORT = 6493;
const BIN = process.env.POSTGRES_BIN || '/usr/lib/postgresql/15/bin';
const missing = existsSync(`${BIN}/pg_basebackup`) ? undefined : `no PostgreSQL 15 binaries in ${BIN}`;
if (missing && process.env.CI === 'true') throw new Error(`${missing}; with CI=true that fails the run`);

/** Plants under `url`'s store (created, migrated, when missing), named `name` and their id. */
async function plantsAt(url: string, ids: number[], name: string): Promise<void> {
  const { store } = await openStore({ databaseUrl: url, databasePoolSize: 2 });
  try {
    await store.plants.writeBatch(
      ids.map((id) => ({ kind: 'create', plant: { id: BigInt(id), name: `${name} ${id}` } })),
    );
  } finally {
    await store.close();
  }
}

/** The suite's server, under `database`, in `schema`. */
function suiteUrl(schema: string, database = new URL(POSTGRES_URL).pathname.slice(1)): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Until `cluster` has replayed `n` changes of `schema`'s log. */
async function replayed(cluster: Cluster, schema: string, n: number): Promise<void> {
  const done = await pollUntil(async () => {
    const rows = await cluster
      .sql<{ n: string }>(`SELECT count(*)::text AS n FROM ${schema}.changes`)
      .catch(() => [{ n: '0' }]);
    return Number(rows[0]!.n) >= n;
  }, 30_000);
  assert.ok(done, `port ${cluster.port} did not replay ${n} changes`);
}

/**
 * An instance on `databaseUrl` reading through `readUrl`: it must leave the read URL out (one
 * warning line that says why), read plant `id` as `expected` (its name, or 404) four times out of
 * four, and send no read there.
 */
async function leftOut(databaseUrl: string, readUrl: string, id: number, expected: string | 404, why: RegExp) {
  const server = await buildTestApp({ databaseUrl, env: { DATABASE_READ_URL: readUrl }, logs: true });
  try {
    const auth = { authorization: `Bearer ${server.token}` };
    const host = new URL(readUrl).host;
    /** The read URL's samples of the read metrics. */
    const metrics = async () => {
      const res = await send(server, { path: '/metrics', headers: auth });
      const families = new Map(parsePrometheusTextFormat(res.text).map((f) => [f.name, f]));
      const sample = (name: string) =>
        families.get(name)?.metrics.find((m) => m.labels?.role !== 'primary' && m.labels?.host === host)?.value;
      return { usable: sample('plant_store_store_standby_usable'), reads: sample('plant_store_store_reads_total') };
    };
    const lines = () =>
      server.logs
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; msg: string; standby?: string; why?: string })
        .filter((l) => l.standby !== undefined);
    // Judged: left out (a line says so), or taken as a standby (usable), whichever comes.
    assert.ok(
      await pollUntil(async () => lines().length > 0 || (await metrics()).usable === '1', 10_000),
      `the read URL was never judged:\n${server.logs.join('\n')}`,
    );
    for (let i = 0; i < 4; i++) {
      const res = await send(server, { path: `/plants/${id}`, headers: auth });
      if (expected === 404) assert.equal(res.status, 404, `read ${i}: ${res.text}`);
      else assert.equal((JSON.parse(res.text) as { name: string }).name, expected, `read ${i}`);
    }
    assert.deepEqual(await metrics(), { usable: '0', reads: '0' });
    const [line, ...more] = lines();
    assert.equal(line?.level, 40);
    assert.match(line!.msg, /^a standby is left out of the reads: /);
    assert.match(line!.why!, why);
    assert.deepEqual(more, [], 'one line, once');
  } finally {
    await server.close();
  }
}

// Behind PgBouncer (scripts/test-pgbouncer.ts) the suite's server is the pooler's: this test makes
// databases and points a read URL at one of them, which the pooler does not serve.
const skip =
  missing ?? (behindPgBouncer ? 'needs the PostgreSQL server itself, not a pooler' : suiteOptions('postgres').skip);

describe('a read URL that is not a standby of the primary', { skip }, () => {
  const schema = `identity_${randomBytes(4).toString('hex')}`;
  const otherDatabase = `plant_store_other_${randomBytes(4).toString('hex')}`;
  let primary: Cluster;
  let kept: Cluster;
  let ahead: Cluster;

  before(async () => {
    primary = await Cluster.primary(PRIMARY_PORT);
    // One after the other: two base backups at once removed WAL the other still streamed.
    kept = await Cluster.standby(primary, KEPT_PORT);
    ahead = await Cluster.standby(primary, AHEAD_PORT);
    await postgresSql(`CREATE DATABASE ${otherDatabase}`);
  });
  after(async () => {
    await Promise.all([kept?.destroy(), ahead?.destroy(), primary?.destroy()]);
    await postgresSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await postgresSql(`DROP DATABASE IF EXISTS ${otherDatabase} WITH (FORCE)`).catch(() => undefined);
  });

  it('another database of the same server, its log ahead: not in recovery', async () => {
    await plantsAt(suiteUrl(schema), [1], 'ours');
    await plantsAt(suiteUrl(schema, otherDatabase), [1, 2, 3, 4], 'theirs');
    const readUrl = new URL(POSTGRES_URL);
    readUrl.pathname = `/${otherDatabase}`;
    await leftOut(suiteUrl(schema), readUrl.toString(), 1, 'ours 1', /^it is not a standby \(not in recovery\)/);
  });

  it("a standby of another cluster: its system identifier is not the primary's", async () => {
    await plantsAt(primary.url(schema), [1, 2, 3, 4, 5], 'cluster');
    await replayed(kept, schema, 5);
    await leftOut(suiteUrl(schema), kept.url(), 1, 'ours 1', /another cluster/);
  });

  it('a standby past the primary it was promoted beside: a failover that lost writes', async () => {
    await replayed(ahead, schema, 5);
    // Writes the standby to be promoted never gets (stopped meanwhile: a paused one would replay
    // the WAL it had received when promoted); the other standby replays them.
    await kept.stop();
    await plantsAt(primary.url(schema), [6, 7, 8, 9], 'lost');
    await replayed(ahead, schema, 9);
    await primary.stop();
    await kept.start();
    await kept.promote();
    assert.deepEqual(await kept.sql('SELECT pg_is_in_recovery() AS r'), [{ r: false }]);
    await leftOut(kept.url(schema), ahead.url(), 6, 404, /past the primary's/);
  });
});
