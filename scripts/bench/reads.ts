// The read benchmark: plain pages and filtered pages (a common and a rare tag, a word, with a
// random cursor too) on a store of 1,000 plants and on a store of BENCH_BIG_STORE, SQLite or
// PostgreSQL. A page must cost the same on both: the ratio of time per request, big over small.
import { load, type LoadResult } from './load.js';
import type { Running } from './processes.js';
import { fmt, table } from './report.js';
import { FILTERED, seededId } from './seed.js';

export interface ReadBench {
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
 * Runs every read load on the two stores `start` seeds and serves (1,000 plants, then `big`),
 * then prints the table and the ratios.
 */
export async function readLoadsOn(b: ReadBench, start: (size: number) => Promise<Running>): Promise<void> {
  const rows: (string | number)[][] = [];
  const results: Record<string, LoadResult> = {};
  for (const size of [1000, b.big]) {
    const service = await start(size);
    try {
      for (const [name, next] of Object.entries(readLoads(size))) {
        const spec = { method: 'GET' as const, headers: b.headers, next, connections: b.connections };
        await load(service, { ...spec, seconds: 1 });
        const r = await load(service, { ...spec, seconds: b.seconds });
        results[`${name} ${size}`] = r;
        rows.push([`${name} (${size.toLocaleString('en')})`, r.rps, r.p50, r.p99, r.errors, r.non2xx, r.peakRssMb]);
      }
    } finally {
      await service.stop();
    }
  }
  table(['operation (store size)', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'RSS MB'], rows);
  for (const name of Object.keys(readLoads(1))) {
    const small = results[`${name} 1000`]!;
    const big = results[`${name} ${b.big}`]!;
    console.log(
      `${name}: time per request on ${b.big.toLocaleString('en')} / on 1,000 = ${fmt(small.rps / big.rps)}x  (target <= 1.5)`,
    );
  }
}
