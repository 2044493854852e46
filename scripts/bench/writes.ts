// The write benchmark on the embedded store: POST /plants against the bare node:http baseline,
// and PUT and DELETE against POST, all in the same rounds (A/B interleaved), so drift of the
// machine hits every figure alike. GET /plants/{id} is measured after them, each round beside the
// baseline again: a request that does everything a write does on the HTTP side (auth, rate limit,
// validation, log line, metrics) and stores nothing, so its ratio to the baseline is about the
// most a write's could be. The bare store (the baseline with the store behind it, on a store
// seeded alike) takes the same three write loads in the same rounds: what a durable write alone
// reaches here, and what the service's HTTP side costs on top of it.
import { join } from 'node:path';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { startBareStore, startBaseline, startService, type Running } from './processes.js';
import { cpuCeiling, fmt, median, peakRss, table } from './report.js';
import { seedStore, seededId } from './seed.js';

export interface WriteBench {
  dir: string;
  token: string;
  rounds: number;
  seconds: number;
  connections: number;
  headers: Record<string, string>;
}

/** Plants seeded before the load, for PUT and DELETE to work on (DELETE uses each once). */
export const SEEDED = 300_000;

/**
 * The three write loads (new plants, renamed seeded plants, seeded plants deleted in turn) and
 * the read beside them (a seeded plant by id). On a fast machine DELETE can outrun the seeded
 * plants (3 rounds of 5 s at 22,000 req/s is 330,000 deletes): it then goes on with the plants
 * POST created, oldest first, and PUT and GET with those not deleted yet, so that every request
 * still finds its plant instead of counting a 404 as a fast write.
 */
export function writeLoads(seeded = SEEDED) {
  const firstNew = 10n ** 15n;
  let posted = 0;
  let deleted = 0;
  let renamed = 0;
  const idOf = (i: number) => (i < seeded ? seededId(i) : firstNew + BigInt(i - seeded));
  // A plant not deleted yet, seeded while any is left: every PUT changes something, every GET finds one.
  const live = () => {
    const end = deleted < seeded ? seeded : seeded + posted;
    return idOf(deleted + Math.floor(Math.random() * Math.max(0, end - deleted)));
  };
  return {
    POST: () => ({ path: '/plants', body: `{"id":${firstNew + BigInt(posted++)},"name":"Monstera","tag":"tropical"}` }),
    PUT: () => ({ path: `/plants/${live()}`, body: `{"name":"renamed ${renamed++}","tag":"tropical"}` }),
    DELETE: () => ({ path: `/plants/${idOf(deleted++)}` }),
    GET: () => ({ path: `/plants/${live()}` }),
  };
}

/** A line for the summary when some answers were not 2xx: the ratios over those loads mislead. */
export function refusals(results: LoadResult[]): string {
  const bad = results.filter((r) => r.non2xx > 0 || r.errors > 0);
  if (bad.length === 0) return '';
  const n = bad.reduce((sum, r) => sum + r.non2xx + r.errors, 0);
  return `\nWARNING: ${n} answers in ${bad.length} loads were errors or not 2xx (see the table): their ratios mislead`;
}

type Method = 'POST' | 'PUT' | 'DELETE' | 'GET';

/**
 * Seconds of each load every server takes before the rounds. V8 was still optimising the
 * service several seconds into a load, and again after a switch to another load: after one
 * second of POST, its first round took about 10% more CPU per request than the next ones, and
 * the first round's ratio was the lowest (docs/performance.md). Measured rounds are of servers
 * that have run each load they take, as a server in use has.
 */
export const WARM_UP_SECONDS: Record<Method, number> = { POST: 5, PUT: 2, DELETE: 2, GET: 2 };

/** Each of `methods` in turn on each server, for its WARM_UP_SECONDS; nothing is recorded. */
export async function warmUp(servers: [Running, ReturnType<typeof writeSpec>][], methods: Method[]): Promise<void> {
  for (const method of methods) {
    for (const [target, spec] of servers) await load(target, spec(method, WARM_UP_SECONDS[method]));
  }
}

/**
 * The warm-up of a write section: the service and the bare store take the three writes, the
 * service the read by id too, the baseline POST.
 */
export async function warmUpWriteSection(
  { service, bare, baseline }: Record<'service' | 'bare' | 'baseline', Running>,
  spec: ReturnType<typeof writeSpec>,
  bareSpec: ReturnType<typeof writeSpec>,
  baseSpec: ReturnType<typeof writeSpec>,
): Promise<void> {
  await warmUp(
    [
      [service, spec],
      [bare, bareSpec],
    ],
    ['POST', 'PUT', 'DELETE'],
  );
  await warmUp([[service, spec]], ['GET']);
  await warmUp([[baseline, baseSpec]], ['POST']);
}

/**
 * Load of `method` on the write benchmark's paths; a request without a body says no Content-Type.
 * `database`: count PostgreSQL's CPU in each load (the PostgreSQL section); `extra`: headers sent besides.
 */
export function writeSpec(
  b: WriteBench,
  loads: ReturnType<typeof writeLoads>,
  database = false,
  extra: Record<string, string> = {},
) {
  return (method: Method, seconds = b.seconds, connections = b.connections) => ({
    database,
    method,
    headers: {
      ...(method === 'DELETE' || method === 'GET' ? { authorization: b.headers.authorization! } : b.headers),
      ...extra,
    },
    next: loads[method],
    seconds,
    connections,
  });
}

export async function sqliteWrites(b: WriteBench): Promise<void> {
  console.log(
    `\n## Writes on SQLite, ${b.connections} connections, ${b.rounds} rounds of ${b.seconds} s, A/B interleaved\n`,
  );
  const path = join(b.dir, 'writes.db');
  const barePath = join(b.dir, 'writes-bare.db');
  await seedStore(path, SEEDED, b.token);
  await seedStore(barePath, SEEDED, b.token);
  const service = await startService({ DATABASE_URL: `sqlite:${path}`, PLANT_STORE_TOKEN: b.token });
  const baseline = await startBaseline();
  const bare = await startBareStore({ DATABASE_URL: `sqlite:${barePath}` });
  const spec = writeSpec(b, writeLoads());
  // Its own ids and counters: the same sequence of writes on its own store.
  const bareSpec = writeSpec(b, writeLoads());
  // The baseline's POSTs count their own ids: counted with the service's, they were ids the
  // service never made, and once DELETE had gone through the seeded plants (a fast machine), the
  // reads and renames of "live" plants asked for them (404s, and PUTs that created).
  const baseSpec = writeSpec(b, writeLoads());
  await warmUpWriteSection({ service, bare, baseline }, spec, bareSpec, baseSpec);
  const rows: (string | number)[][] = [];
  const ratio = { POST: [] as number[], PUT: [] as number[], DELETE: [] as number[], GET: [] as number[] };
  const bareRatio = { POST: [] as number[], PUT: [] as number[], DELETE: [] as number[], service: [] as number[] };
  const posts: LoadResult[] = [];
  const bases: LoadResult[] = [];
  const barePosts: LoadResult[] = [];
  const writes: LoadResult[] = [];
  const all: LoadResult[] = [];
  for (let round = 1; round <= b.rounds; round++) {
    const post = await load(service, spec('POST'));
    const base = await load(baseline, baseSpec('POST'));
    const barePost = await load(bare, bareSpec('POST'));
    bases.push(base);
    barePosts.push(barePost);
    const put = await load(service, spec('PUT'));
    const barePut = await load(bare, bareSpec('PUT'));
    const del = await load(service, spec('DELETE'));
    const bareDel = await load(bare, bareSpec('DELETE'));
    posts.push(post);
    writes.push(post, put, del);
    all.push(post, base, barePost, put, barePut, del, bareDel);
    ratio.POST.push(post.rps / base.rps);
    ratio.PUT.push(put.rps / post.rps);
    ratio.DELETE.push(del.rps / post.rps);
    bareRatio.POST.push(barePost.rps / base.rps);
    bareRatio.PUT.push(barePut.rps / barePost.rps);
    bareRatio.DELETE.push(bareDel.rps / barePost.rps);
    bareRatio.service.push(post.rps / barePost.rps);
    rows.push(
      row(`${round} POST plant-store`, post),
      row(`${round} POST baseline`, base),
      row(`${round} POST bare store`, barePost),
      row(`${round} PUT plant-store`, put),
      row(`${round} PUT bare store`, barePut),
      row(`${round} DELETE plant-store`, del),
      row(`${round} DELETE bare store`, bareDel),
    );
  }
  await bare.stop();
  // The reads come after every write round, each beside the baseline again: the peak RSS of the
  // writes stays theirs alone (reads fill the read connection's page cache).
  const gets: [LoadResult, LoadResult][] = [];
  for (let round = 1; round <= b.rounds; round++) {
    const get = await load(service, spec('GET'));
    const base = await load(baseline, baseSpec('POST'));
    gets.push([get, base]);
    ratio.GET.push(get.rps / base.rps);
    all.push(get, base);
    rows.push(row(`${round} GET by id plant-store`, get), row(`${round} POST baseline`, base));
  }
  table(['round / load', ...COLUMNS], rows);
  const baseRps = bases.map((r) => r.rps);
  console.log(
    `\nPOST / baseline (median of rounds): ${fmt(median(ratio.POST))}x  (target >= 0.6)` +
      cpuCeiling('POST', posts, baseRps, 'the baseline') +
      cpuCeiling('baseline', bases, baseRps, 'itself') +
      `\nPOST p99 (median of rounds): ${fmt(median(posts.map((r) => r.p99)))} ms  (target <= 10)` +
      `\nPUT / POST: ${fmt(median(ratio.PUT))}x, DELETE / POST: ${fmt(median(ratio.DELETE))}x  (target: within 1.3x, i.e. >= 0.77)` +
      peakRss('peak RSS of the writes', Math.max(...writes.map((r) => r.peakRssMb))) +
      `\nGET by id / baseline: ${fmt(median(ratio.GET))}x  (writes nothing: about the most POST / baseline could be)` +
      cpuCeiling(
        'GET by id',
        gets.map(([get]) => get),
        gets.map(([, base]) => base.rps),
        'the baseline',
      ) +
      `\nbare store POST / baseline: ${fmt(median(bareRatio.POST))}x  (the same durable write with no HTTP features)` +
      cpuCeiling('bare store POST', barePosts, baseRps, 'the baseline') +
      `\nbare store PUT / POST: ${fmt(median(bareRatio.PUT))}x, DELETE / POST: ${fmt(median(bareRatio.DELETE))}x` +
      `\nPOST / bare store POST: ${fmt(median(bareRatio.service))}x  (what the service's HTTP side leaves of it)` +
      refusals(all),
  );
  await service.stop();
  await baseline.stop();
}
