// `npm run bench`: Plant Store against a bare node:http baseline, measured in one run on one
// machine, so the ratios hold even where absolute figures drift. See docs/performance.md.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { servicesStarted, startService, type Running } from './processes.js';
import { postgresReads } from './postgres-reads.js';
import { batchWrites } from './batches.js';
import { changeFeed } from './feed.js';
import { pipelinedFloods } from './floods.js';
import { readLoadsOn } from './reads.js';
import { readReplicas } from './replicas.js';
import { fmt, median, statesTable, table } from './report.js';
import { postgresWrites } from './postgres.js';
import { seedStore } from './seed.js';
import { tracesCost } from './traces.js';
import { corsCost } from './cors.js';
import { snapshots } from './snapshot.js';
import { sqliteWrites } from './writes.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const BIG = Number(process.env.BENCH_BIG_STORE ?? 1_000_000);
const CONNECTIONS = 50;
const SECTIONS = new Set(
  (
    process.env.BENCH_SECTIONS ??
    'writes,reads,startup,postgres,postgres-reads,floods,feed,snapshot,batches,traces,cors,replicas'
  ).split(','),
);
const token = `pst_${randomBytes(32).toString('base64url')}`;
const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-'));
const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

async function reads(): Promise<void> {
  console.log(
    `\n## Reads on a store of 1,000 and of ${BIG.toLocaleString('en')} plants, ${ROUNDS} rounds of ${SECONDS} s, A/B interleaved\n`,
  );
  const b = { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, headers: auth, big: BIG };
  await readLoadsOn(b, async (size) => {
    const path = join(dir, `reads-${size}.db`);
    const seeding = performance.now();
    await seedStore(path, size, token);
    console.log(`seeded ${size.toLocaleString('en')} plants in ${fmt((performance.now() - seeding) / 1000)} s`);
    return startService({ DATABASE_URL: `sqlite:${path}`, PLANT_STORE_TOKEN: token });
  });
}

async function startup(): Promise<void> {
  console.log('\n## Start to ready (listening, store open, migrations done), median of 3\n');
  const rows: (string | number)[][] = [];
  for (const [label, file, fresh] of [
    ['fresh store', 'fresh', true],
    [`${BIG.toLocaleString('en')} plants`, `reads-${BIG}.db`, false],
  ] as const) {
    if (!fresh && !existsSync(join(dir, file))) {
      rows.push([label, 'run with the reads section']);
      continue;
    }
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const path = join(dir, fresh ? `fresh-${i}.db` : file);
      const s: Running = await startService({ DATABASE_URL: `sqlite:${path}`, PLANT_STORE_TOKEN: token }, false);
      times.push(s.readyMs);
      await s.stop();
    }
    rows.push([label, median(times)]);
  }
  table(['store', 'ready ms'], rows);
  console.log('(target < 500 ms)');
}

console.log(
  `# Plant Store benchmark — ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
const bench = { dir, token, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, headers: auth };
try {
  if (SECTIONS.has('writes')) await sqliteWrites(bench);
  if (SECTIONS.has('reads')) await reads();
  if (SECTIONS.has('startup')) await startup();
  if (SECTIONS.has('postgres')) await postgresWrites(bench);
  if (SECTIONS.has('postgres-reads')) await postgresReads({ ...bench, big: BIG });
  if (SECTIONS.has('floods')) await pipelinedFloods(bench);
  if (SECTIONS.has('feed')) await changeFeed(bench);
  if (SECTIONS.has('batches')) await batchWrites(bench);
  if (SECTIONS.has('traces')) await tracesCost(bench);
  if (SECTIONS.has('cors')) await corsCost(bench);
  if (SECTIONS.has('snapshot')) await snapshots({ dir, token, rounds: ROUNDS, big: BIG });
  if (SECTIONS.has('replicas')) await readReplicas(bench);
  statesTable(servicesStarted);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
