// The read benchmark: plain pages and filtered pages (a common and a rare tag, a word, with a
// random cursor too) on a store of 1,000 plants and on a store of BENCH_BIG_STORE, SQLite or
// PostgreSQL. A page must cost the same on both: the ratio of time per request, big over small.
// Both stores are served at once and each load alternates between them over the rounds (A/B
// interleaved), so that a noisy moment of the machine hits both sides of a ratio alike.
import { load, row } from './load.js';
import type { Running } from './processes.js';
import { fmt, median, table } from './report.js';
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
 * Runs every read load on the two stores `start` seeds and serves (1,000 plants and `big`), in
 * `rounds` rounds of small then big, then prints the table and the ratios (median of the rounds).
 */
export async function readLoadsOn(b: ReadBench, start: (size: number) => Promise<Running>): Promise<void> {
  const rows: (string | number)[][] = [];
  const ratios: Record<string, number[]> = {};
  const services: [number, Running][] = [];
  try {
    for (const size of [1000, b.big]) services.push([size, await start(size)]);
    for (const name of Object.keys(readLoads(1))) {
      for (let round = 1; round <= b.rounds; round++) {
        const rps: number[] = [];
        for (const [size, service] of services) {
          const spec = {
            method: 'GET' as const,
            headers: b.headers,
            next: readLoads(size)[name]!,
            connections: b.connections,
          };
          if (round === 1) await load(service, { ...spec, seconds: 1 });
          const r = await load(service, { ...spec, seconds: b.seconds });
          rps.push(r.rps);
          rows.push(row(`${round} ${name} (${size.toLocaleString('en')})`, r));
        }
        (ratios[name] ??= []).push(rps[0]! / rps[1]!);
      }
    }
  } finally {
    for (const [, service] of services) await service.stop();
  }
  table(
    ['round operation (store size)', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'RSS MB', 'loop p99 ms'],
    rows,
  );
  for (const [name, r] of Object.entries(ratios)) {
    console.log(
      `${name}: time per request on ${b.big.toLocaleString('en')} / on 1,000 = ${fmt(median(r))}x` +
        ` (rounds: ${r.map(fmt).join(', ')})  (target <= 1.5)`,
    );
  }
}
