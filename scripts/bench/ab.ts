// Two ways of running the service against each other (traces on and off, CORS_ORIGINS set and
// not): each on a store of its own, the same sequence of plants, each load A/B interleaved with
// the order swapped every round, so that drift of the machine hits both alike.
import { join } from 'node:path';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { startService } from './processes.js';
import { fmt, median, table } from './report.js';
import { refusals, warmUp, writeLoads, writeSpec, type WriteBench } from './writes.js';

export interface Way {
  name: string;
  env?: Record<string, string>;
  /** Sent with every request of its loads, beside the token. */
  headers?: Record<string, string>;
}

type Method = 'POST' | 'GET';

/** Runs `methods` on the two ways and prints their table and, per method, B over A. */
export async function twoWays(b: WriteBench, section: string, ways: [Way, Way], methods: Method[]): Promise<void> {
  const servers = await Promise.all(
    ways.map(async (way) => {
      const db = join(b.dir, `${section}-${way.name.replace(/\W+/g, '-')}.db`);
      const service = await startService({ DATABASE_URL: `sqlite:${db}`, PLANT_STORE_TOKEN: b.token, ...way.env });
      // Each its own plants, the same sequence of them: POST creates, GET reads those created.
      return { way, service, spec: writeSpec(b, writeLoads(0), false, way.headers) };
    }),
  );
  try {
    await warmUp(
      servers.map((s) => [s.service, s.spec]),
      methods,
    );
    const rows: (string | number)[][] = [];
    const results = new Map(servers.map((s) => [s, new Map<Method, LoadResult[]>(methods.map((m) => [m, []]))]));
    for (let round = 1; round <= b.rounds; round++) {
      for (const method of methods) {
        for (const s of round % 2 ? servers : [...servers].reverse()) {
          const r = await load(s.service, s.spec(method));
          results.get(s)!.get(method)!.push(r);
          rows.push(row(`${round} ${method} ${s.way.name}`, r));
        }
      }
    }
    table(['round / load', ...COLUMNS], rows);
    const [a, z] = servers.map((s) => results.get(s)!) as [Map<Method, LoadResult[]>, Map<Method, LoadResult[]>];
    const lines = methods.map((method) => {
      const [ra, rz] = [a.get(method)!, z.get(method)!];
      const cpu = (rs: LoadResult[]) => median(rs.map((r) => r.cpu.server));
      return (
        `\n${method}: ${ways[1].name} / ${ways[0].name} ${fmt(median(rz.map((r, i) => r.rps / ra[i]!.rps)))}x req/s; ` +
        `server CPU per request ${fmt(cpu(ra))} -> ${fmt(cpu(rz))} us (${cpu(rz) >= cpu(ra) ? '+' : ''}${fmt(cpu(rz) - cpu(ra))} us, medians of rounds)`
      );
    });
    console.log(lines.join('') + refusals([...results.values()].flatMap((m) => [...m.values()].flat())));
  } finally {
    for (const s of servers) await s.service.stop();
  }
}
