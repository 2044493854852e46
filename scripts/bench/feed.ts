// The change feed (PRODUCT.md §6, "Measured by npm run bench"), against one instance, the streams
// read by a child process (stream-reader.ts) that shares neither the server's event loop nor its
// CPU figures:
// - POST /plants at the write section's load with 10,000 Server-Sent Events streams open against
//   the same with none, in the same rounds (A/B interleaved). The streams follow a tag the load
//   never writes: open, live, every change weighed against their filter, none sent to them. The
//   server's peak RSS meanwhile is judged too (under 250 MB).
// - the delay from each POST's answer to its event on every one of 1,000 streams that follow
//   everything, at a paced POST rate (RATE a second), with 9,000 more following that tag: 10,000
//   open, each change reaching all 1,000.
// - what 10,000 idle streams add to the server's resident memory, beside what they add to a bare
//   node:http server that holds as many (bare-sse-server.mjs): node:http's own cost of a connection.
// Both at once, 1,000 streams following everything at the full write load, is shown too, and not
// judged: at 4,000 POSTs a second that is 4,000,000 events a second, about 1 GB/s through
// loopback, which the reader process alone cannot take in on a 2-core machine that also runs the
// server and the load generator (docs/performance.md).
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { connectOrSkip, SERVER } from './postgres.js';
import { startBareStreams, startService, type Running } from './processes.js';
import { Readers } from './readers.js';
import { against, fmt, MB_PER_MIB, median, table } from './report.js';
import { seedStore } from './seed.js';
import { refusals, warmUp, writeLoads, writeSpec, type WriteBench } from './writes.js';

/** Streams open in the judged loads; FOLLOWING of them follow everything in the paced one. */
export const STREAMS = 10_000;
const FOLLOWING = 1000;
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

/**
 * Closes the reader's streams and waits until the server has given their places back (its
 * `plant_store_change_streams`): else the next streams, opened at once, would find them taken.
 */
async function closeAll(service: Running, readers: Readers, token: string): Promise<void> {
  await readers.close();
  for (let waited = 0; waited < 20_000; waited += 100, await sleep(100)) {
    const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    if (/^plant_store_change_streams 0$/m.test(await res.text())) return;
  }
  throw new Error('the server still held streams 20 s after their readers closed them');
}

/** RSS before and after the streams are opened, with nothing written meanwhile: they are idle. */
async function openIdle(service: Running, readers: Readers, token: string, query = ''): Promise<[number, number]> {
  const before = await settledRss(service);
  await readers.open(service.url, token, STREAMS, query);
  return [before, await settledRss(service)];
}

/** What STREAMS idle streams add to a bare node:http server's RSS (MiB): node:http's own share. */
async function bareStreams(): Promise<number> {
  const bare = await startBareStreams();
  const readers = new Readers();
  try {
    const [before, after] = await openIdle(bare, readers, 'none');
    return after - before;
  } finally {
    readers.kill();
    await bare.stop();
  }
}

const HEADER = [
  ...['round', 'RSS before MiB', 'RSS streams open', 'streams MiB', 'POSTs told', 'events', 'of those POSTs'],
  ...['missing', 'streams ended', 'delivery p50 ms', 'p99 ms', 'max ms', 'reader CPU us/POST'],
];

async function feedOn(b: WriteBench, store: string, env: Record<string, string>, bareMib: number): Promise<void> {
  console.log(`\n### ${store}\n`);
  // Past the default CHANGES_MAX_STREAMS (10,000), so that all open however fast the last closed.
  const service = await startService({ ...env, PLANT_STORE_TOKEN: b.token, CHANGES_MAX_STREAMS: `${STREAMS + 100}` });
  const readers = new Readers();
  try {
    // First on the fresh server, with little garbage of earlier loads in its heap to be collected meanwhile.
    const [fresh, freshOpen] = await openIdle(service, readers, b.token);
    await closeAll(service, readers, b.token);
    const spec = writeSpec(b, writeLoads(0));
    await warmUp([[service, spec]], ['POST']);
    const loads: (string | number)[][] = [];
    const rounds: (string | number)[][] = [];
    const ratio: number[] = [];
    const p99: number[] = [];
    const cost: number[] = [];
    const peak: number[] = [];
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
      await closeAll(service, readers, b.token);
      // FOLLOWING following everything, the rest that tag, at a paced rate: each change to FOLLOWING of them.
      await readers.open(service.url, b.token, FOLLOWING);
      await readers.open(service.url, b.token, STREAMS - FOLLOWING, UNTOUCHED);
      const ticks = readers.cpuTicks();
      const paced = await load(service, { ...spec('POST'), rate: RATE, onResponse: readers.follow() });
      const r = await readers.report(FOLLOWING);
      const told = readers.told;
      // And at the full load, for what it shows (not judged: see above).
      const full = await load(service, { ...spec('POST'), onResponse: readers.follow() });
      const f = await readers.report(FOLLOWING);
      await closeAll(service, readers, b.token);
      all.push(alone, open, paced, full);
      ratio.push(open.rps / alone.rps);
      p99.push(r.p99);
      cost.push(after - before);
      peak.push(Math.max(open.peakRssMb, paced.peakRssMb));
      flood.push(full.rps / alone.rps);
      floodP99.push(f.p99);
      missing += told * FOLLOWING - r.matched;
      loads.push(
        row(`${round} POST, no streams`, alone),
        row(`${round} POST, ${STREAMS} streams open`, open),
        row(`${round} POST ${RATE}/s, ${FOLLOWING} of ${STREAMS} following`, paced),
        row(`${round} POST, ${FOLLOWING} of ${STREAMS} following`, full),
      );
      rounds.push([`${round}`, before, after, after - before, told, r.events, r.matched, told * FOLLOWING - r.matched]);
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
          `peak RSS with ${STREAMS} streams open, under load (median of rounds)`,
          median(peak) * MB_PER_MIB,
          ' MB',
          250,
          false,
        ) +
        against(
          `delivery to all ${FOLLOWING} following streams of ${STREAMS} at ${RATE} POST/s, p99 (median of rounds)`,
          median(p99),
          ' ms',
          250,
          false,
        ) +
        `\n  from each POST's answer (as the load generator saw it) to its event on each stream; ${missing} deliveries missing in all rounds` +
        `\n  not judged: ${FOLLOWING} streams following everything at the full load: POST ${fmt(median(flood))}x of none, delivery p99 ${fmt(median(floodP99))} ms` +
        against(`RSS of ${STREAMS} idle streams, ${fmt(mib)} MiB`, mib * MB_PER_MIB, ' MB', 100, false) +
        `\n  the larger of the fresh server's (${fmt(fresh)} -> ${fmt(freshOpen)} MiB) and the median of rounds'` +
        `; a bare node:http server holding as many: ${fmt(bareMib)} MiB (${fmt(mib / bareMib)}x)` +
        `\n  opens answered 503 by the overload guard and tried again after Retry-After, as EventSource does: ${readers.refusals}` +
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
  const bareMib = await bareStreams();
  const path = join(b.dir, 'feed.db');
  await seedStore(path, 1000, b.token);
  await feedOn(b, 'SQLite', { DATABASE_URL: `sqlite:${path}` }, bareMib);
  const admin = await connectOrSkip();
  if (!admin) return;
  const schema = `bench_feed_${Date.now()}`;
  try {
    await feedOn(b, 'PostgreSQL', { DATABASE_URL: `${SERVER}?schema=${schema}` }, bareMib);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
