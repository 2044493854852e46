// The change feed (PRODUCT.md, "The change feed: list, then follow"): with 1,000 Server-Sent
// Events streams of GET /plants/changes open on one instance, POST /plants against the same
// server with none open, in the same rounds (A/B interleaved), at the write section's load; the
// delay from each POST's answer to its event on every stream; and what 1,000 idle streams add to
// the server's resident memory. The streams are read by a child process (stream-reader.ts), so
// that they share neither the server's event loop nor its CPU figures.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { connectOrSkip, SERVER } from './postgres.js';
import { startService, type Running } from './processes.js';
import { Readers } from './readers.js';
import { against, fmt, MB_PER_MIB, median, table } from './report.js';
import { seedStore } from './seed.js';
import { refusals, warmUp, writeLoads, writeSpec, type WriteBench } from './writes.js';

export const STREAMS = 1000;

/** The server's RSS once it has settled: the median of five readings after two quiet seconds. */
async function settledRss(service: Running): Promise<number> {
  await sleep(2000);
  const xs: number[] = [];
  for (let i = 0; i < 5; i++, await sleep(200)) xs.push(service.rssMb());
  return median(xs);
}

/** RSS before and after the streams are opened, with nothing written meanwhile: they are idle. */
async function openIdle(service: Running, readers: Readers, token: string): Promise<[number, number]> {
  const before = await settledRss(service);
  await readers.open(service.url, token, STREAMS);
  return [before, await settledRss(service)];
}

const HEADER = [
  ...['round', 'RSS before MiB', 'RSS streams open', 'streams MiB', 'POSTs told', 'events', 'of those POSTs'],
  ...['missing', 'streams ended', 'delivery p50 ms', 'p99 ms', 'max ms', 'reader CPU us/POST'],
];

async function feedOn(b: WriteBench, store: string, env: Record<string, string>): Promise<void> {
  console.log(`\n### ${store}\n`);
  // Past the default CHANGES_MAX_STREAMS (1,000), so that all 1,000 open however the last closed.
  const service = await startService({ ...env, PLANT_STORE_TOKEN: b.token, CHANGES_MAX_STREAMS: `${STREAMS + 100}` });
  const readers = new Readers();
  try {
    // First on the fresh server, with little garbage of earlier loads in its heap to be collected meanwhile.
    const [fresh, freshOpen] = await openIdle(service, readers, b.token);
    await readers.close();
    const spec = writeSpec(b, writeLoads(0));
    await warmUp([[service, spec]], ['POST']);
    const loads: (string | number)[][] = [];
    const rounds: (string | number)[][] = [];
    const ratio: number[] = [];
    const p99: number[] = [];
    const cost: number[] = [];
    const all: LoadResult[] = [];
    let missing = 0;
    for (let round = 1; round <= b.rounds; round++) {
      // Both loads note every answer's position for the reader, so the load generator does the same work in each.
      const alone = await load(service, { ...spec('POST'), onResponse: readers.follow() });
      await readers.report(0);
      const [before, after] = await openIdle(service, readers, b.token);
      await readers.report(0);
      const ticks = readers.cpuTicks();
      const streamed = await load(service, { ...spec('POST'), onResponse: readers.follow() });
      const r = await readers.report(STREAMS);
      const told = readers.told;
      await readers.close();
      all.push(alone, streamed);
      ratio.push(streamed.rps / alone.rps);
      p99.push(r.p99);
      cost.push(after - before);
      missing += told * STREAMS - r.matched;
      loads.push(row(`${round} POST, no streams`, alone), row(`${round} POST, ${STREAMS} streams`, streamed));
      rounds.push([`${round}`, before, after, after - before, told, r.events, r.matched, told * STREAMS - r.matched]);
      rounds.at(-1)!.push(r.ended, r.p50, r.p99, r.max, Readers.us(r.cpuTicks - ticks) / Math.max(1, told));
      await sleep(1000);
    }
    table(['round / load', ...COLUMNS], loads);
    console.log('');
    table(HEADER, rounds);
    // The larger of the fresh server's and the rounds': a ceiling is not judged on its kindest reading.
    const mib = Math.max(freshOpen - fresh, median(cost));
    console.log(
      against(`POST with ${STREAMS} streams / with none (median of rounds)`, median(ratio), 'x', 0.8, true) +
        against(`delivery to all ${STREAMS} streams, p99 (median of rounds)`, median(p99), ' ms', 250, false) +
        `\n  from each POST's answer (as the load generator saw it) to its event on each stream; ${missing} deliveries missing in all rounds` +
        against(`RSS of ${STREAMS} idle streams, ${fmt(mib)} MiB`, mib * MB_PER_MIB, ' MB', 60, false) +
        `\n  the larger of the fresh server's (${fmt(fresh)} -> ${fmt(freshOpen)} MiB) and the median of rounds'` +
        refusals(all),
    );
  } finally {
    readers.kill();
    await service.stop();
  }
}

/** The feed on SQLite, then on PostgreSQL unless it cannot be reached. */
export async function changeFeed(b: WriteBench): Promise<void> {
  console.log(
    `\n## The change feed: POST with and without ${STREAMS} SSE streams open, ${b.connections} connections, ${b.rounds} rounds of ${b.seconds} s`,
  );
  const path = join(b.dir, 'feed.db');
  await seedStore(path, 1000, b.token);
  await feedOn(b, 'SQLite', { DATABASE_URL: `sqlite:${path}` });
  const admin = await connectOrSkip();
  if (!admin) return;
  const schema = `bench_feed_${Date.now()}`;
  try {
    await feedOn(b, 'PostgreSQL', { DATABASE_URL: `${SERVER}?schema=${schema}` });
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
