// Read replicas (the manual, "Read replicas"): GET /plants/{id} with one streaming standby against the
// primary alone, and what a read's Change-Position costs, on clusters of the bench's own made
// from PostgreSQL 15's binaries (a primary and a standby by pg_basebackup -R, as the tests make
// them). Two instances on the same primary, one reading the primary alone and one with
// DATABASE_READ_URL, loaded in turn second by second in each round. The loads:
// - plain reads by id, on each;
// - reads by id carrying a Change-Position the standby replayed long ago (the header's cost);
// - while a paced writer POSTs through the replicated instance, reads by id carrying the
//   Change-Position of the latest write (a client reading right after writes: the standby is
//   asked where it is, and the primary serves what it has not replayed yet), against plain reads
//   under the same writes.
// The share of each load's reads that the standby served comes from /metrics. PostgreSQL's CPU
// counts both clusters: on one machine the standby's work comes out of the same cores.
import pg from 'pg';
import { Cluster } from '../../test/support/clusters.js';
import { COLUMNS, load, merged, row, type LoadResult, type LoadSpec } from './load.js';
import { startService, type Running } from './processes.js';
import { cpuCeiling, fmt, median, table } from './report.js';
import { seededId, seededPlant, seedPlantWords } from './seed.js';
import type { WriteBench } from './writes.js';

const PRIMARY_PORT = Number(process.env.BENCH_REPLICA_PORT ?? 6465);
const PLANTS = 100_000;
/** POSTs a second of the writer beside the read-your-writes loads. */
const WRITE_RATE = 200;
const SCHEMA = 'bench_replicas';

/** Reads the instance sent to each role so far (plant_store_store_reads_total). */
async function readsByRole(service: Running, token: string): Promise<{ primary: number; standby: number }> {
  const text = await (await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  const sum = (role: string) =>
    [...text.matchAll(new RegExp(`^plant_store_store_reads_total\\{[^}]*role="${role}"[^}]*\\} (\\S+)$`, 'gm'))]
      .map((m) => Number(m[1]))
      .reduce((a, b) => a + b, 0);
  return { primary: sum('primary'), standby: sum('standby') };
}

/** A writer POSTing through `service` at WRITE_RATE, keeping the latest Change-Position answered. */
function startWriter(service: Running, token: string): { latest: () => string; stop: () => Promise<void> } {
  let latest = '';
  let next = 10_000_000;
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const sent = fetch(`${service.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: next++, name: 'written meanwhile' }),
    })
      .then(async (r) => {
        const position = r.headers.get('change-position');
        if (position !== null && BigInt(position) > BigInt(latest || '0')) latest = position;
        await r.arrayBuffer();
      })
      .catch(() => undefined)
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
  }, 1000 / WRITE_RATE);
  return {
    latest: () => latest,
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

interface Load {
  name: string;
  on: 'alone' | 'replicated';
  spec: Omit<LoadSpec, 'seconds'>;
}

export async function readReplicas(b: WriteBench): Promise<void> {
  console.log(
    `\n## Read replicas: GET /plants/{id} with one standby against the primary alone, and Change-Position, ` +
      `${PLANTS.toLocaleString('en')} plants, ${b.rounds} rounds of ${b.seconds} s, interleaved\n`,
  );
  let primary: Cluster | undefined;
  let standby: Cluster | undefined;
  const services: Running[] = [];
  try {
    try {
      primary = await Cluster.primary(PRIMARY_PORT);
      standby = await Cluster.standby(primary, PRIMARY_PORT + 1);
    } catch (err) {
      console.log(`skipped: no clusters of PostgreSQL 15 could be made (${(err as Error).message.split('\n')[0]})`);
      return;
    }
    const databaseUrl = primary.url(SCHEMA);
    const alone = await startService({ DATABASE_URL: databaseUrl, PLANT_STORE_TOKEN: b.token });
    services.push(alone);
    const replicated = await startService({
      DATABASE_URL: databaseUrl,
      DATABASE_READ_URL: standby.url(),
      PLANT_STORE_TOKEN: b.token,
    });
    services.push(replicated);
    // A position the standby replayed long ago: the header's cost alone.
    const old = await seed(primary, standby, alone, b.token);
    const random = () => `/plants/${seededId(Math.floor(Math.random() * PLANTS))}`;
    const spec = (next: LoadSpec['next']): Omit<LoadSpec, 'seconds'> => ({
      method: 'GET',
      headers: b.headers,
      next,
      connections: b.connections,
      database: true,
    });
    const at = (position: () => string) => () => ({
      path: random(),
      headers: { ...b.headers, 'change-position': position() },
    });
    const idle: Load[] = [
      { name: 'GET /plants/{id}, primary alone', on: 'alone', spec: spec(() => ({ path: random() })) },
      { name: 'GET /plants/{id}, one standby', on: 'replicated', spec: spec(() => ({ path: random() })) },
      { name: '  + Change-Position replayed', on: 'replicated', spec: spec(at(() => old)) },
    ];
    const { results, shares } = await rounds(b, { alone, replicated }, idle);
    const writer = startWriter(replicated, b.token);
    let written: Awaited<ReturnType<typeof rounds>>;
    try {
      written = await rounds(b, { alone, replicated }, [
        { name: `one standby, ${WRITE_RATE} POST/s beside`, on: 'replicated', spec: spec(() => ({ path: random() })) },
        { name: '  + Change-Position of the latest POST', on: 'replicated', spec: spec(at(writer.latest)) },
      ]);
    } finally {
      await writer.stop();
    }
    const all = [
      ...idle.map((l) => l.name),
      `one standby, ${WRITE_RATE} POST/s beside`,
      '  + Change-Position of the latest POST',
    ];
    const everything = [...results, ...written.results];
    const allShares = [...shares, ...written.shares];
    table(
      ['round load', ...COLUMNS, 'standby %'],
      everything.flatMap((r, k) =>
        r.map((x, round) => [...row(`${round + 1} ${all[k]}`, x), allShares[k]![round]! * 100]),
      ),
    );
    const rps = everything.map((r) => median(r.map((x) => x.rps)));
    console.log(
      `\none standby / primary alone: ${fmt(rps[1]! / rps[0]!)}x; Change-Position replayed / plain: ${fmt(rps[2]! / rps[1]!)}x;` +
        ` Change-Position of the latest POST / plain, under ${WRITE_RATE} POST/s: ${fmt(rps[4]! / rps[3]!)}x`,
    );
    for (const k of everything.keys()) {
      console.log(
        cpuCeiling(
          all[k]!.trim(),
          everything[k]!,
          everything[0]!.map((x) => x.rps),
          'the primary alone',
        ).slice(1),
      );
    }
  } finally {
    for (const s of services) await s.stop();
    await standby?.destroy();
    await primary?.destroy();
  }
}

/**
 * Each load in turn, one second at a time (the order reversed every second), `b.seconds` seconds
 * a round; per load and round, the result and the share of its reads the standby served.
 */
async function rounds(
  b: WriteBench,
  on: Record<Load['on'], Running>,
  loads: Load[],
): Promise<{ results: LoadResult[][]; shares: number[][] }> {
  const results: LoadResult[][] = loads.map(() => []);
  const shares: number[][] = loads.map(() => []);
  for (const l of loads) await load(on[l.on], { ...l.spec, seconds: 1 }); // warm-up
  for (let round = 0; round < b.rounds; round++) {
    const slices: LoadResult[][] = loads.map(() => []);
    const served = loads.map(() => ({ primary: 0, standby: 0 }));
    for (let second = 0; second < b.seconds; second++) {
      const order = second % 2 === 0 ? [...loads.keys()] : [...loads.keys()].reverse();
      for (const k of order) {
        const service = on[loads[k]!.on];
        const before = await readsByRole(service, b.token);
        slices[k]!.push(await load(service, { ...loads[k]!.spec, seconds: 1 }));
        const after = await readsByRole(service, b.token);
        served[k]!.primary += after.primary - before.primary;
        served[k]!.standby += after.standby - before.standby;
      }
    }
    slices.forEach((s, k) => {
      results[k]!.push(merged(s));
      const { primary, standby } = served[k]!;
      shares[k]!.push(standby / Math.max(1, primary + standby));
    });
  }
  return { results, shares };
}

/**
 * PLANTS plants in the primary's schema (the services migrated it), and one written through
 * `service`, whose Change-Position is returned once the standby has replayed it.
 */
async function seed(primary: Cluster, standby: Cluster, service: Running, token: string): Promise<string> {
  const admin = new pg.Client({ connectionString: primary.url() });
  await admin.connect();
  try {
    const plants = Array.from({ length: PLANTS }, (_, i) => seededPlant(i, PLANTS));
    await admin.query({
      text: `INSERT INTO ${SCHEMA}.plants (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])`,
      values: [plants.map((p) => String(p.id)), plants.map((p) => p.name), plants.map((p) => p.tag)],
    });
    await seedPlantWords(admin, SCHEMA);
    await admin.query(`VACUUM ANALYZE ${SCHEMA}.plants, ${SCHEMA}.plant_words`);
  } finally {
    await admin.end();
  }
  const written = await fetch(`${service.url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: -1, name: 'seeded last' }),
  });
  const position = written.headers.get('change-position')!;
  for (let i = 0; i < 600; i++) {
    const [row] = await standby.sql<{ p: string | null }>(`SELECT max(seq)::text AS p FROM ${SCHEMA}.changes`);
    if (row?.p && BigInt(row.p) >= BigInt(position)) return position;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the standby did not replay the seeded plants in 60 s');
}
