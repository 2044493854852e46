// The read benchmark: plain pages and filtered pages (a common and a rare tag, a word, with a
// random cursor too) on a store of 1,000 plants and on a store of BENCH_BIG_STORE, SQLite or
// PostgreSQL. A page must cost the same on both: the ratio of time per request, big over small.
// Both stores are served at once, and within each round a load alternates between them second by
// second (small, big, then big, small, ...), so that a noisy moment of the machine hits both sides
// of a ratio alike.
import { COLUMNS, load, merged, row, type LoadResult, type LoadSpec } from './load.js';
import type { Running } from './processes.js';
import { fmt, median, peakRss, table } from './report.js';
import { FILTERED, seededId } from './seed.js';

export interface ReadBench {
  rounds: number;
  seconds: number;
  connections: number;
  headers: Record<string, string>;
  big: number;
}

/** The requests of each read load, for a store of `size` seeded plants. */
function readLoads(size: number): Record<string, () => { path: string }> {
  const random = () => seededId(Math.floor(Math.random() * size));
  return {
    'GET /plants/{id}': () => ({ path: `/plants/${random()}` }),
    'GET /plants?limit=100&after=': () => ({ path: `/plants?limit=100&after=${random()}` }),
    'GET /plants?tag=<common>&limit=20': () => ({ path: `/plants?tag=${FILTERED.commonTag}&limit=20` }),
    'GET /plants?tag=<rare>&limit=20': () => ({ path: `/plants?tag=${FILTERED.rareTag}&limit=20` }),
    'GET /plants?tag=<common>&limit=20&after=': () => ({
      path: `/plants?tag=${FILTERED.commonTag}&limit=20&after=${random()}`,
    }),
    'GET /plants?q=<word>&limit=20': () => ({ path: `/plants?q=${FILTERED.commonWord}&limit=20` }),
    'GET /plants?q=<rare word>&limit=20': () => ({ path: `/plants?q=${FILTERED.rareWord}&limit=20` }),
    'GET /plants?q=<word>&limit=20&after=': () => ({
      path: `/plants?q=${FILTERED.commonWord}&limit=20&after=${random()}`,
    }),
  };
}

/**
 * One round of a load on both stores: `seconds` slices of 1 s each, in turn, the order swapped
 * every slice (ABBA) so that drift within the round falls on both alike. Until 2026-11-24 a round
 * ran 5 s on the small store, then 5 s on the big one: the rounds of one read ranged from 0.63 to
 * 1.80 in one run, and in two runs that day a different read's median passed 1.5 (1.54, 1.58).
 */
async function alternate(targets: Running[], specs: Omit<LoadSpec, 'seconds'>[], seconds: number) {
  const slices: LoadResult[][] = targets.map(() => []);
  for (let slice = 0; slice < seconds; slice++) {
    const order = slice % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) slices[k]!.push(await load(targets[k]!, { ...specs[k]!, seconds: 1 }));
  }
  return slices.map(merged);
}

/**
 * Runs every read load on the two stores `start` seeds and serves (1,000 plants and `big`), in
 * `rounds` rounds of both stores second by second, then prints the table and the ratios (median
 * of the rounds).
 */
export async function readLoadsOn(
  b: ReadBench,
  start: (size: number) => Promise<Running>,
  /** Count PostgreSQL's CPU per request too (its stores). */
  database = false,
): Promise<void> {
  const rows: (string | number)[][] = [];
  let peak = 0;
  const ratios: Record<string, number[]> = {};
  const services: [number, Running][] = [];
  try {
    for (const size of [1000, b.big]) services.push([size, await start(size)]);
    for (const name of Object.keys(readLoads(1))) {
      const targets = services.map(([, service]) => service);
      const specs = services.map(([size]) => ({
        method: 'GET' as const,
        headers: b.headers,
        next: readLoads(size)[name]!,
        connections: b.connections,
        database,
      }));
      for (const [k, target] of targets.entries()) await load(target, { ...specs[k]!, seconds: 1 }); // warm-up
      for (let round = 1; round <= b.rounds; round++) {
        const results = await alternate(targets, specs, b.seconds);
        results.forEach((r, k) => rows.push(row(`${round} ${name} (${services[k]![0].toLocaleString('en')})`, r)));
        peak = Math.max(peak, ...results.map((r) => r.peakRssMb));
        (ratios[name] ??= []).push(results[0]!.rps / results[1]!.rps);
      }
    }
  } finally {
    for (const [, service] of services) await service.stop();
  }
  table(['round operation (store size)', ...COLUMNS], rows);
  for (const [name, r] of Object.entries(ratios)) {
    console.log(
      `${name}: time per request on ${b.big.toLocaleString('en')} / on 1,000 = ${fmt(median(r))}x` +
        ` (rounds: ${r.map(fmt).join(', ')})  (target <= 1.5)`,
    );
  }
  console.log(peakRss('peak RSS of the reads, either store size', peak).slice(1));
}
