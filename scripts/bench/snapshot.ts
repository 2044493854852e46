// List and follow in one connection (PRODUCT.md §6): a snapshot of BENCH_BIG_STORE plants
// (`GET /plants/changes?snapshot=true` as a stream, read to its `synced` event) against paging
// through the same plants with `GET /plants?limit=1000`, following each page's `Link` (the two
// steps a client took before). One client each, in turn, the order swapped every round; the rate
// is plants a second, and the server's resident memory is sampled meanwhile: a snapshot holds one
// page at a time however large the store.
import { request } from 'node:http';
import { join } from 'node:path';
import { connectOrSkip, SERVER } from './postgres.js';
import { startService, type Running } from './processes.js';
import { against, fmt, median, table } from './report.js';
import { seedPostgresSchema, seedStore } from './seed.js';

export interface SnapshotBench {
  dir: string;
  token: string;
  rounds: number;
  big: number;
}

/** Reads `path` whole, calling `chunk` with its text; resolves to its headers' Link, when it ends or `done` says so. */
function read(url: string, token: string, path: string, accept: string, chunk: (text: string) => boolean) {
  return new Promise<string | undefined>((resolve, reject) => {
    const req = request(`${url}${path}`, { headers: { authorization: `Bearer ${token}`, accept } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET ${path} answered ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        if (chunk(text)) {
          res.destroy();
          resolve(undefined);
        }
      });
      res.on('end', () => resolve(String(res.headers.link ?? '') || undefined));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every plant by pages of 1,000, following `rel="next"`: how many. */
async function pageThrough(s: Running, token: string): Promise<number> {
  let plants = 0;
  for (let path: string | undefined = '/plants?limit=1000'; path;) {
    let body = '';
    const link = await read(s.url, token, path, 'application/json', (text) => ((body += text), false));
    plants += (JSON.parse(body) as unknown[]).length;
    path = /<([^>]+)>;\s*rel="next"/.exec(link ?? '')?.[1];
  }
  return plants;
}

/** The snapshot as a stream, to its `synced`: how many plant events it held. */
async function snapshotOf(s: Running, token: string): Promise<number> {
  let plants = 0;
  let tail = '';
  await read(s.url, token, '/plants/changes?snapshot=true', 'text/event-stream', (text) => {
    const t = tail + text;
    plants += t.split('event: plant\n').length - 1;
    // An event name cut by the chunk's end is counted with the next chunk.
    tail = t.slice(-12);
    if (tail.includes('event: plant\n')) tail = '';
    return t.includes('event: synced\n');
  });
  return plants;
}

/** Runs `f` on `s`, sampling its RSS: [plants a second, peak RSS over the start, MiB]. */
async function timed(s: Running, f: () => Promise<number>, want: number): Promise<[number, number]> {
  const before = s.rssMb();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, s.rssMb())), 100);
  const started = performance.now();
  const plants = await f();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  if (plants !== want) throw new Error(`read ${plants} plants of ${want}`);
  return [plants / seconds, peak - before];
}

async function snapshotOn(b: SnapshotBench, label: string, s: Running): Promise<void> {
  const rows: (string | number)[][] = [];
  const ratio: number[] = [];
  const growth: number[] = [];
  // Once each first: the pages the store reads are in its cache for both.
  await pageThrough(s, b.token);
  await snapshotOf(s, b.token);
  for (let round = 1; round <= b.rounds; round++) {
    const ways = [
      ['pages', () => timed(s, () => pageThrough(s, b.token), b.big)],
      ['snapshot', () => timed(s, () => snapshotOf(s, b.token), b.big)],
    ] as const;
    const got: Record<string, [number, number]> = {};
    for (const [name, run] of round % 2 ? ways : [...ways].reverse()) got[name] = await run();
    rows.push([`${round}`, fmt(got.pages![0]), fmt(got.pages![1]), fmt(got.snapshot![0]), fmt(got.snapshot![1])]);
    ratio.push(got.snapshot![0] / got.pages![0]);
    growth.push(got.snapshot![1]);
  }
  console.log(`\n### ${label}\n`);
  table(['round', 'pages: plants/s', 'RSS growth MiB', 'snapshot: plants/s', 'RSS growth MiB'], rows);
  console.log(
    against(`snapshot / pages of 1,000 (median of rounds)`, median(ratio), 'x', 0.5, true) +
      `\n  the server's RSS grew by at most ${fmt(Math.max(...growth))} MiB during a snapshot of ${b.big.toLocaleString('en')} plants`,
  );
}

export async function snapshots(b: SnapshotBench): Promise<void> {
  console.log(
    `\n## A snapshot of ${b.big.toLocaleString('en')} plants in one stream against pages of 1,000, ${b.rounds} rounds`,
  );
  const path = join(b.dir, `snapshot-${b.big}.db`);
  await seedStore(path, b.big, b.token);
  const sqlite = await startService({ DATABASE_URL: `sqlite:${path}`, PLANT_STORE_TOKEN: b.token });
  try {
    await snapshotOn(b, 'SQLite', sqlite);
  } finally {
    await sqlite.stop();
  }
  const admin = await connectOrSkip();
  if (!admin) return;
  const schema = `bench_snapshot_${Date.now()}`;
  try {
    const pg = await startService({ DATABASE_URL: `${SERVER}?schema=${schema}`, PLANT_STORE_TOKEN: b.token });
    try {
      await seedPostgresSchema(admin, schema, b.big);
      await snapshotOn(b, 'PostgreSQL', pg);
    } finally {
      await pg.stop();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
