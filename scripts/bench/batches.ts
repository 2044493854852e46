// Batches (PRODUCT.md, "Batch writes"): loading plants over the API with POST /plants/batch, each
// request 1,000 creations, against what each store's reference reaches in the same rounds (A/B
// interleaved), in plants (rows) a second:
// - SQLite: single POST /plants at the write section's 50 connections; target >= 20x.
// - PostgreSQL: pgbench, each transaction one 1,000-row multi-row INSERT of plant-sized rows into
//   a bare table, with as many clients as the batches have connections; target >= 0.5x. The
//   batches do more per row than that INSERT (the words of each name, a change in the log) and
//   their Node process shares the two cores with PostgreSQL: the CPU per 1,000 plants is shown.
// Each half also loads the bare store (bare-store-server.mjs: the same use case, write path and
// store behind node:http, the body read by JSON.parse, no validation, ETags or Fastify) with the
// same batches: what the store's own work allows any HTTP path over it, against the same reference.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { openStore } from '../../src/store/open-store.js';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { connectOrSkip, pgbench, pgbenchRow, SERVER } from './postgres.js';
import { startBareStore, startService, type Running } from './processes.js';
import { against, cpuCeiling, fmt, median, table } from './report.js';
import { SIZE, sqliteRowsAlone, storeStatements } from './statements-alone.js';
import { refusals, warmUp, writeLoads, writeSpec, type WriteBench } from './writes.js';

/** Batch requests under way at once (pgbench clients alike), of SIZE creations each. */
const CONNECTIONS = 4;

/**
 * The next id a batch creates: far past the other loads' ids, and counting on across loads, so
 * that every round creates plants (a batch of ids some earlier load made would be 1,000
 * idempotent retries, which write nothing).
 */
let next = 2n * 10n ** 15n;

/** Batches of SIZE new plants. */
function batchLoad(b: WriteBench, seconds = b.seconds, database = false) {
  return {
    database,
    method: 'POST' as const,
    headers: b.headers,
    seconds,
    connections: CONNECTIONS,
    signature: false as const,
    next: () => {
      const ops: string[] = [];
      for (let i = 0; i < SIZE; i++)
        ops.push(`{"op":"create","plant":{"id":${next++},"name":"Monstera","tag":"tropical"}}`);
      return { path: '/plants/batch', body: `{"operations":[${ops.join(',')}]}` };
    },
  };
}

/** pgbench's script: each transaction one INSERT of SIZE plant-sized rows with random ids. */
function multiRowInsert(schema: string): string {
  const rows = Array.from({ length: SIZE }, (_, i) => `(:id + ${i}, 'Monstera', 'tropical')`).join(', ');
  return `\\set id random(1, 9000000000000000) * ${SIZE}\nINSERT INTO ${schema}.t (id, name, tag) VALUES ${rows} ON CONFLICT DO NOTHING;\n`;
}

const perPlant = (r: LoadResult) => r.rps * SIZE;

async function onSqlite(b: WriteBench): Promise<void> {
  console.log('\n### SQLite: batches of 1,000 creations against single POST /plants\n');
  const service = await startService({
    DATABASE_URL: `sqlite:${join(b.dir, 'batches.db')}`,
    PLANT_STORE_TOKEN: b.token,
  });
  const bare = await startBareStore({ DATABASE_URL: `sqlite:${join(b.dir, 'batches-bare.db')}` });
  try {
    const single = writeSpec(b, writeLoads(0));
    await warmUp([[service, single]], ['POST']);
    await load(service, batchLoad(b, 2));
    await load(bare, batchLoad(b, 2));
    const rows: (string | number)[][] = [];
    const ratios: number[] = [];
    const bareRatios: number[] = [];
    const alones: { rate: number; cpuMs: number; post: number }[] = [];
    const all: LoadResult[] = [];
    const rowsPath = join(b.dir, 'batches-rows.db');
    // Each run's ids from far past the last one's (about 2,000,000 plants in 5 s on a fast machine).
    const rowsAlone = (seconds: number) => sqliteRowsAlone(rowsPath, seconds, (next += 10n ** 9n));
    await rowsAlone(2);
    for (let round = 1; round <= b.rounds; round++) {
      const post = await load(service, single('POST'));
      const batch = await load(service, batchLoad(b));
      const bareBatch = await load(bare, batchLoad(b));
      const alone = await rowsAlone(b.seconds);
      all.push(post, batch);
      ratios.push(perPlant(batch) / post.rps);
      bareRatios.push(perPlant(bareBatch) / post.rps);
      alones.push({ ...alone, post: post.rps });
      rows.push(row(`${round} POST /plants`, post), row(`${round} POST /plants/batch`, batch));
      rows.push(row(`${round} bare store, batch`, bareBatch));
      rows.push([
        `${round} plants/s`,
        `${fmt(post.rps)} / ${fmt(perPlant(batch))} / bare ${fmt(perPlant(bareBatch))} / statements alone ${fmt(alone.rate)}`,
      ]);
    }
    table(['round / load', ...COLUMNS], rows);
    console.log(
      against('plants a second, batches / single POSTs (median of rounds)', median(ratios), 'x', 20, true) +
        `\nthe bare store's batches / single POSTs (median of rounds): ${fmt(median(bareRatios))}x` +
        `\nthe store's statements alone (sqlite-rows.mjs: no HTTP, no JSON, no write path), batches / single` +
        ` POSTs (median of rounds): ${fmt(median(alones.map((a) => a.rate / a.post)))}x, ${fmt(median(alones.map((a) => a.cpuMs)))} ms of CPU a batch` +
        ` (SQLite has one writer: no server over this schema passes this)` +
        cpuCeiling(
          'batch (1,000 plants)',
          all.filter((_, i) => i % 2),
          all.filter((_, i) => i % 2 === 0).map((p) => p.rps / SIZE),
          'the POSTs (in plants)',
        ) +
        `\nbatch p99 (median of rounds): ${fmt(median(all.filter((_, i) => i % 2).map((r) => r.p99)))} ms` +
        refusals(all),
    );
  } finally {
    await Promise.all([service.stop(), bare.stop()]);
  }
}

async function onPostgres(b: WriteBench): Promise<void> {
  console.log('\n### PostgreSQL: batches of 1,000 creations against pgbench 1,000-row INSERTs\n');
  const admin = await connectOrSkip();
  if (!admin) return;
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const service = await startService({ DATABASE_URL: `${SERVER}?schema=${schema}`, PLANT_STORE_TOKEN: b.token });
  let bare: Running | undefined;
  try {
    bare = await startBareStore({ DATABASE_URL: `${SERVER}?schema=${schema}_bare` });
    await admin.query(`CREATE TABLE ${schema}.t (id bigint PRIMARY KEY, name text NOT NULL, tag text)`);
    // The store's tables, made by its migrations, for its statements run by pgbench alone.
    const migrated = await openStore({ databaseUrl: `${SERVER}?schema=${schema}_rows`, databasePoolSize: 1 });
    await migrated.store.close();
    const statementsAlone = storeStatements(`${schema}_rows`);
    await load(service, batchLoad(b, 3, true));
    await load(bare, batchLoad(b, 3, true));
    await pgbench(b.dir, multiRowInsert(schema), CONNECTIONS, 1);
    await pgbench(b.dir, statementsAlone, CONNECTIONS, 1);
    const rows: (string | number)[][] = [];
    const ratios: number[] = [];
    const all: LoadResult[] = [];
    const refs: Awaited<ReturnType<typeof pgbench>>[] = [];
    const alones: Awaited<ReturnType<typeof pgbench>>[] = [];
    const bareRatios: number[] = [];
    for (let round = 1; round <= b.rounds; round++) {
      const batch = await load(service, batchLoad(b, b.seconds, true));
      const ref = await pgbench(b.dir, multiRowInsert(schema), CONNECTIONS, b.seconds);
      const bareBatch = await load(bare, batchLoad(b, b.seconds, true));
      const alone = await pgbench(b.dir, statementsAlone, CONNECTIONS, b.seconds);
      all.push(batch);
      refs.push(ref);
      alones.push(alone);
      ratios.push(perPlant(batch) / (ref.tps * SIZE));
      bareRatios.push(perPlant(bareBatch) / (ref.tps * SIZE));
      rows.push(row(`${round} POST /plants/batch`, batch));
      rows.push(pgbenchRow(`${round} pgbench (a transaction: 1,000 rows)`, ref));
      rows.push(row(`${round} bare store, batch`, bareBatch));
      rows.push(pgbenchRow(`${round} the store's statements by pgbench`, alone));
      rows.push([
        `${round} rows/s`,
        `${fmt(perPlant(batch))} / ${fmt(ref.tps * SIZE)} / bare ${fmt(perPlant(bareBatch))} / statements alone ${fmt(alone.tps * SIZE)}`,
      ]);
    }
    table(['round / load (a request: 1,000 rows)', ...COLUMNS], rows);
    console.log(
      against('rows a second, batches / pgbench (median of rounds)', median(ratios), 'x', 0.5, true) +
        `\nthe bare store's batches / pgbench (median of rounds): ${fmt(median(bareRatios))}x` +
        `\nthe store's statements for a batch, sent by pgbench with no Node at all / pgbench (median of rounds):` +
        ` ${fmt(median(alones.map((a, k) => a.tps / refs[k]!.tps)))}x (a server over this schema shares the cores with that work: none passes this)` +
        cpuCeiling(
          'batch (1,000 rows)',
          all,
          refs.map((r) => r.tps),
          'pgbench',
        ) +
        cpuCeiling(
          "the store's statements (1,000 plants)",
          alones,
          refs.map((r) => r.tps),
          'pgbench',
        ) +
        cpuCeiling(
          'pgbench (1,000 rows)',
          refs,
          refs.map((r) => r.tps),
          'itself',
        ) +
        refusals(all),
    );
  } finally {
    await Promise.all([service.stop(), bare?.stop()]);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema}_bare CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema}_rows CASCADE`);
    await admin.end();
  }
}

export async function batchWrites(b: WriteBench): Promise<void> {
  console.log(`\n## Batches of ${SIZE} creations, ${CONNECTIONS} connections, ${b.rounds} rounds of ${b.seconds} s\n`);
  await onSqlite(b);
  await onPostgres(b);
}
