// The change feed (PRODUCT.md, "The change feed: list, then follow"), in three measures against
// one instance, the streams read by a child process (stream-reader.ts) that shares neither the
// server's event loop nor its CPU figures:
// - POST /plants at the write section's load with 1,000 Server-Sent Events streams open against
//   the same with none, in the same rounds (A/B interleaved). The streams follow a tag the load
//   never writes: open, live, every change weighed against their filter, none sent to them.
// - the delay from each POST's answer to its event on every one of 1,000 streams that follow
//   everything, at a paced POST rate (RATE a second): each change reaches all 1,000.
// - what 1,000 idle streams add to the server's resident memory.
// Both at once, 1,000 streams following everything at the full write load, is shown too, and not
// judged: at 4,000 POSTs a second that is 4,000,000 events a second, about 1 GB/s through
// loopback, which the reader process alone cannot take in on a 2-core machine that also runs the
// server and the load generator (docs/performance.md).
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
/** POSTs a second while every stream follows every change. */
const RATE = 200;
/** A tag the load never writes: streams that follow it weigh every change and are sent none. */
const UNTOUCHED = '?tag=bench-not-written';

/** The server's RSS once it has settled: the median of five readings after two quiet seconds. */
async function settledRss(service: Running): Promise<number> {
  await sleep(2000);
  const xs: number[] = [];
  for (let i = 0; i < 5; i++, await sleep(200)) xs.push(service.rssMb());
  return median(xs);
}

/** RSS before and after the streams are opened, with nothing written meanwhile: they are idle. */
async function openIdle(service: Running, readers: Readers, token: string, query = ''): Promise<[number, number]> {
  const before = await settledRss(service);
  await readers.open(service.url, token, STREAMS, query);
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
    const flood: number[] = [];
    const floodP99: number[] = [];
    for (let round = 1; round <= b.rounds; round++) {
      // Both loads note every answer's position for the reader, so the load generator does the same work in each.
      const alone = await load(service, { ...spec('POST'), onResponse: readers.follow() });
      await readers.report(0);
      // Open and live, following a tag the load never writes: what open streams cost the writes.
      const [before, after] = await openIdle(service, readers, b.token, UNTOUCHED);
      await readers.report(0);
      const open = await load(service, { ...spec('POST'), onResponse: readers.follow() });
      await readers.report(0);
      await readers.close();
      // Following everything, at a paced rate: each change to all of them.
      await readers.open(service.url, b.token, STREAMS);
      const ticks = readers.cpuTicks();
      const paced = await load(service, { ...spec('POST'), rate: RATE, onResponse: readers.follow() });
      const r = await readers.report(STREAMS);
      const told = readers.told;
      // And at the full load, for what it shows (not judged: see above).
      const full = await load(service, { ...spec('POST'), onResponse: readers.follow() });
      const f = await readers.report(STREAMS);
      await readers.close();
      all.push(alone, open, paced, full);
      ratio.push(open.rps / alone.rps);
      p99.push(r.p99);
      cost.push(after - before);
      flood.push(full.rps / alone.rps);
      floodP99.push(f.p99);
      missing += told * STREAMS - r.matched;
      loads.push(
        row(`${round} POST, no streams`, alone),
        row(`${round} POST, ${STREAMS} streams open`, open),
        row(`${round} POST ${RATE}/s, ${STREAMS} following`, paced),
        row(`${round} POST, ${STREAMS} following`, full),
      );
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
      against(`POST with ${STREAMS} streams open / with none (median of rounds)`, median(ratio), 'x', 0.8, true) +
        against(
          `delivery to all ${STREAMS} streams at ${RATE} POST/s, p99 (median of rounds)`,
          median(p99),
          ' ms',
          250,
          false,
        ) +
        `\n  from each POST's answer (as the load generator saw it) to its event on each stream; ${missing} deliveries missing in all rounds` +
        `\n  not judged: ${STREAMS} streams following everything at the full load: POST ${fmt(median(flood))}x of none, delivery p99 ${fmt(median(floodP99))} ms` +
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
