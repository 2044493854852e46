import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { load, type LoadResult } from './load.js';
import { startService, type Running } from './processes.js';
import { table } from './report.js';

const SERVER = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The write benchmark on PostgreSQL, one instance and then two on one database, as a report:
 * compared with nothing. Skipped, saying why, when PostgreSQL cannot be reached.
 */
export async function postgresWrites(opts: {
  token: string;
  seconds: number;
  connections: number;
  headers: Record<string, string>;
  next: () => { path: string; body: string };
}): Promise<void> {
  console.log(
    `\n## POST /plants on PostgreSQL, ${opts.connections} connections in all, ${opts.seconds} s (report only)\n`,
  );
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: SERVER, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (err) {
    console.log(`skipped: PostgreSQL at ${SERVER} is unreachable (${(err as Error).message})`);
    return;
  }
  const env = { DATABASE_URL: `${SERVER}?schema=${schema}`, PLANT_STORE_TOKEN: opts.token };
  const rows: (string | number)[][] = [];
  const instances: Running[] = [];
  try {
    instances.push(await startService(env));
    const spec = { method: 'POST' as const, headers: opts.headers, next: opts.next, seconds: opts.seconds };
    await load(instances[0]!, { ...spec, seconds: 1, connections: opts.connections });
    rows.push(row('1 instance', [await load(instances[0]!, { ...spec, connections: opts.connections })]));
    instances.push(await startService(env));
    const half = Math.ceil(opts.connections / 2);
    const both = await Promise.all(instances.map((i) => load(i, { ...spec, connections: half })));
    rows.push(row('2 instances', both));
    table(['servers', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'RSS MB (each)'], rows);
  } finally {
    await Promise.all(instances.map((i) => i.stop()));
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

/** Two load generators at once: requests add up, latency is the worse of the two. */
function row(label: string, results: LoadResult[]): (string | number)[] {
  return [
    label,
    results.reduce((s, r) => s + r.rps, 0),
    Math.max(...results.map((r) => r.p50)),
    Math.max(...results.map((r) => r.p99)),
    results.reduce((s, r) => s + r.errors, 0),
    results.reduce((s, r) => s + r.non2xx, 0),
    results.map((r) => Math.round(r.peakRssMb)).join(' / '),
  ];
}
