// The write benchmark on PostgreSQL: POST /plants against pgbench's one-row INSERT transactions at
// the same number of clients on the same database server, and PUT and DELETE against POST, in the
// same rounds (A/B interleaved); then two instances on one database. The bare node:http baseline
// (HTTP with no database) and GET /plants/{id} (batched like the writes) run in the same rounds,
// and so does the bare store (the baseline with the store behind it, on a schema of its own).
// Skipped, saying why, when PostgreSQL cannot be reached.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { cpuPerRequest, cpuSample, elapsed, type CpuPerRequest } from './cpu.js';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { startBareStore, startBaseline, startService, type Running } from './processes.js';
import { cpuCeiling, fmt, median, peakRss, table } from './report.js';
import { seedPlantWords } from './seed.js';
import { refusals, SEEDED, warmUpWriteSection, writeLoads, writeSpec, type WriteBench } from './writes.js';

export const SERVER = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const run = promisify(execFile);

/** pgbench's script of the write section: one INSERT of a plant-sized row with a random id a transaction. */
const oneRowInsert = (schema: string) =>
  `\\set id random(1, 9000000000000000000)\nINSERT INTO ${schema}.t (id, name, tag) VALUES (:id, 'Monstera', 'tropical') ON CONFLICT DO NOTHING;\n`;

/**
 * pgbench: `clients` clients running `script` (one transaction each time), with pgbench's own
 * CPU (the load generator's) and PostgreSQL's per transaction.
 */
export async function pgbench(
  dir: string,
  script: string,
  clients: number,
  seconds: number,
): Promise<{ tps: number; ms: number; cpu: CpuPerRequest }> {
  const file = join(dir, `pgbench-${randomBytes(4).toString('hex')}.sql`);
  writeFileSync(file, script);
  const url = new URL(SERVER);
  const args = ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', file];
  args.push('-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username || 'postgres'));
  const before = cpuSample(undefined, true);
  const { stdout } = await run('pgbench', [...args, url.pathname.slice(1)], { timeout: (seconds + 30) * 1000 });
  const after = cpuSample(undefined, true);
  const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1]);
  // Its tps leaves out its connections' set-up, which its CPU and the database's include: per
  // transaction at its rate over the whole run, as a server's are over its whole load.
  const cpu = cpuPerRequest(before, after, tps * elapsed(before, after));
  const ms = Number(/latency average = ([\d.]+) ms/.exec(stdout)?.[1]);
  return { tps, ms, cpu };
}

/** pgbench's line in a table of loads (columns: COLUMNS): it has no server of its own. */
export function pgbenchRow(label: string, ref: Awaited<ReturnType<typeof pgbench>>): (string | number)[] {
  const c = ref.cpu;
  return [
    label,
    ref.tps,
    `avg ${fmt(ref.ms)}`,
    '-',
    '-',
    '-',
    '-',
    '-',
    '-',
    c.loadGen,
    c.database!,
    c.others,
    c.idle * 100,
  ];
}

/** A connection to the benchmark's server, or undefined (saying the section is skipped) when unreachable. */
export async function connectOrSkip(): Promise<pg.Client | undefined> {
  const admin = new pg.Client({ connectionString: SERVER, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
    return admin;
  } catch (err) {
    console.log(`skipped: PostgreSQL at ${SERVER} is unreachable (${(err as Error).message})`);
    return undefined;
  }
}

export async function postgresWrites(b: WriteBench): Promise<void> {
  console.log(
    `\n## Writes on PostgreSQL, ${b.connections} connections, ${b.rounds} rounds of ${b.seconds} s, against pgbench\n`,
  );
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = await connectOrSkip();
  if (!admin) return;
  const env = { DATABASE_URL: `${SERVER}?schema=${schema}`, PLANT_STORE_TOKEN: b.token };
  const bareSchema = `${schema}_bare`;
  const instances: Running[] = [];
  try {
    instances.push(await startService(env));
    const service = instances[0]!;
    await admin.query(`CREATE TABLE ${schema}.t (id bigint PRIMARY KEY, name text NOT NULL, tag text)`);
    instances.push(await startBaseline());
    const baseline = instances[1]!;
    instances.push(await startBareStore({ DATABASE_URL: `${SERVER}?schema=${bareSchema}` }));
    const bare = instances[2]!;
    // The plants PUT and DELETE work on, as writes.ts numbers them, in each store's schema.
    for (const s of [schema, bareSchema]) {
      await admin.query(
        `INSERT INTO ${s}.plants (id, name, tag) SELECT g::bigint * 7919, 'plant ' || g, 'seeded' FROM generate_series(0, ${SEEDED - 1}) g`,
      );
      await seedPlantWords(admin, s);
      await admin.query(`VACUUM ANALYZE ${s}.plants, ${s}.plant_words`);
    }
    // PostgreSQL's CPU is counted in each load: it shares the cores with the server here.
    const spec = writeSpec(b, writeLoads(), true);
    const bareSpec = writeSpec(b, writeLoads(), true);
    // Ids of its own, as in the SQLite section (writes.ts).
    const baseSpec = writeSpec(b, writeLoads(), true);
    await warmUpWriteSection({ service, bare, baseline }, spec, bareSpec, baseSpec);
    await pgbench(b.dir, oneRowInsert(schema), b.connections, 1);
    const rows: (string | number)[][] = [];
    const ratio = { POST: [] as number[], PUT: [] as number[], DELETE: [] as number[], GET: [] as number[] };
    const bareBase: number[] = [];
    const bareRatio = { POST: [] as number[], PUT: [] as number[], DELETE: [] as number[] };
    const posts: LoadResult[] = [];
    const refs: Awaited<ReturnType<typeof pgbench>>[] = [];
    const barePosts: LoadResult[] = [];
    const writes: LoadResult[] = [];
    const all: LoadResult[] = [];
    for (let round = 1; round <= b.rounds; round++) {
      const post = await load(service, spec('POST'));
      const ref = await pgbench(b.dir, oneRowInsert(schema), b.connections, b.seconds);
      refs.push(ref);
      const barePost = await load(bare, bareSpec('POST'));
      barePosts.push(barePost);
      const put = await load(service, spec('PUT'));
      const barePut = await load(bare, bareSpec('PUT'));
      const del = await load(service, spec('DELETE'));
      const bareDel = await load(bare, bareSpec('DELETE'));
      const get = await load(service, spec('GET'));
      const base = await load(baseline, baseSpec('POST'));
      posts.push(post);
      writes.push(post, put, del);
      all.push(post, barePost, put, barePut, del, bareDel, get, base);
      ratio.GET.push(get.rps / ref.tps);
      bareBase.push(base.rps / ref.tps);
      bareRatio.POST.push(barePost.rps / ref.tps);
      bareRatio.PUT.push(barePut.rps / barePost.rps);
      bareRatio.DELETE.push(bareDel.rps / barePost.rps);
      ratio.POST.push(post.rps / ref.tps);
      ratio.PUT.push(put.rps / post.rps);
      ratio.DELETE.push(del.rps / post.rps);
      rows.push(
        row(`${round} POST plant-store`, post),
        pgbenchRow(`${round} pgbench INSERT`, ref),
        row(`${round} POST bare store`, barePost),
        row(`${round} PUT plant-store`, put),
        row(`${round} PUT bare store`, barePut),
        row(`${round} DELETE plant-store`, del),
        row(`${round} DELETE bare store`, bareDel),
        row(`${round} GET by id plant-store`, get),
        row(`${round} POST baseline`, base),
      );
    }
    await baseline.stop();
    await bare.stop();
    instances.splice(1, 2, await startService(env));
    const half = Math.ceil(b.connections / 2);
    const both = await Promise.all(instances.map((i) => load(i, spec('POST', b.seconds, half))));
    all.push(...both);
    rows.push([
      '2 instances POST',
      both.reduce((s, r) => s + r.rps, 0),
      Math.max(...both.map((r) => r.p50)),
      Math.max(...both.map((r) => r.p99)),
      both.reduce((s, r) => s + r.errors, 0),
      both.reduce((s, r) => s + r.non2xx, 0),
      Math.max(...both.map((r) => r.peakRssMb)),
      // Two loads at once in this process: neither's CPU per request is its own.
      ...['-', '-', '-', '-', '-', '-'],
    ]);
    table(['round / load', ...COLUMNS], rows);
    const refTps = refs.map((r) => r.tps);
    console.log(
      `\nPOST / pgbench (median of rounds): ${fmt(median(ratio.POST))}x  (target >= 1.0)` +
        cpuCeiling('POST', posts, refTps, 'pgbench') +
        cpuCeiling('pgbench', refs, refTps, 'itself') +
        `\nPOST p99 (median of rounds): ${fmt(median(posts.map((r) => r.p99)))} ms  (target <= 20)` +
        `\nPUT / POST: ${fmt(median(ratio.PUT))}x, DELETE / POST: ${fmt(median(ratio.DELETE))}x  (target >= 0.77)` +
        peakRss('peak RSS of the writes', Math.max(...writes.map((r) => r.peakRssMb))) +
        `\nbare node:http baseline / pgbench: ${fmt(median(bareBase))}x  (HTTP with no database at all)` +
        `\nbare store POST / pgbench: ${fmt(median(bareRatio.POST))}x  (the same batched write with no HTTP features)` +
        cpuCeiling('bare store POST', barePosts, refTps, 'pgbench') +
        `\nbare store PUT / POST: ${fmt(median(bareRatio.PUT))}x, DELETE / POST: ${fmt(median(bareRatio.DELETE))}x` +
        `\nGET by id / pgbench: ${fmt(median(ratio.GET))}x  (reads by id are batched too)` +
        refusals(all),
    );
  } finally {
    await Promise.all(instances.map((i) => i.stop()));
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${bareSchema} CASCADE`);
    await admin.end();
  }
}
