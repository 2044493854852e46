// What traces cost when on: the service with OTEL_EXPORTER_OTLP_ENDPOINT set (spans of each
// request and of each store transaction, exported by the SDK's batch processor over
// OTLP/HTTP with protobuf, its default) against the same service without, POST and GET by id on
// SQLite, A/B interleaved, the order of the two swapped every round. The collector is a sink
// process that drops what it gets: the server's own cost is what is measured. With traces off
// the service loads none of OpenTelemetry, so off is the service as it was (docs/performance.md).
import { join } from 'node:path';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { startOtlpSink, startService, type Running } from './processes.js';
import { fmt, median, table } from './report.js';
import { refusals, warmUp, writeLoads, writeSpec, type WriteBench } from './writes.js';

export async function tracesCost(b: WriteBench): Promise<void> {
  console.log(
    `\n## Traces on and off, SQLite, ${b.connections} connections, ${b.rounds} rounds of ${b.seconds} s, A/B interleaved\n`,
  );
  const sink = await startOtlpSink();
  const service = (name: string, env: Record<string, string> = {}, probe = true) =>
    startService(
      { DATABASE_URL: `sqlite:${join(b.dir, `traces-${name}.db`)}`, PLANT_STORE_TOKEN: b.token, ...env },
      probe,
    );
  // Start to ready on a fresh store, each way in turn: what loading the SDK adds to a start.
  const ready = { off: [] as number[], on: [] as number[] };
  for (let i = 0; i < 3; i++) {
    for (const [name, env] of [
      ['off', {}],
      ['on', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }],
    ] as const) {
      const s = await service(`start-${name}-${i}`, env, false);
      ready[name].push(s.readyMs);
      await s.stop();
    }
  }
  console.log(
    `start to ready, fresh store (median of 3): off ${fmt(median(ready.off))} ms, on ${fmt(median(ready.on))} ms\n`,
  );
  const off = await service('off');
  const on = await service('on', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
  // Each its own plants, the same sequence of them: POST creates, GET reads those created.
  const servers: [string, Running, ReturnType<typeof writeSpec>][] = [
    ['off', off, writeSpec(b, writeLoads(0))],
    ['on', on, writeSpec(b, writeLoads(0))],
  ];
  await warmUp(
    servers.map(([, s, spec]) => [s, spec]),
    ['POST', 'GET'],
  );
  const rows: (string | number)[][] = [];
  const all: LoadResult[] = [];
  const results = { POST: { off: [] as LoadResult[], on: [] as LoadResult[] }, GET: { off: [], on: [] } } as Record<
    'POST' | 'GET',
    Record<'off' | 'on', LoadResult[]>
  >;
  for (let round = 1; round <= b.rounds; round++) {
    for (const method of ['POST', 'GET'] as const) {
      for (const [name, s, spec] of round % 2 ? servers : [...servers].reverse()) {
        const r = await load(s, spec(method));
        results[method][name as 'off' | 'on'].push(r);
        all.push(r);
        rows.push(row(`${round} ${method} traces ${name}`, r));
      }
    }
  }
  table(['round / load', ...COLUMNS], rows);
  const summary = (method: 'POST' | 'GET') => {
    const { off: o, on: n } = results[method];
    const rps = median(n.map((r, i) => r.rps / o[i]!.rps));
    const cpuOff = median(o.map((r) => r.cpu.server));
    const cpuOn = median(n.map((r) => r.cpu.server));
    return (
      `\n${method}: traces on / off ${fmt(rps)}x req/s; server CPU per request ${fmt(cpuOff)} -> ${fmt(cpuOn)} us ` +
      `(+${fmt(cpuOn - cpuOff)} us, medians of rounds)`
    );
  };
  console.log(summary('POST') + summary('GET') + refusals(all));
  for (const s of [off, on, sink]) await s.stop();
}
