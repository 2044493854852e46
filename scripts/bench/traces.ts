// What traces cost when on: the service with OTEL_EXPORTER_OTLP_ENDPOINT set (spans of each
// request and of each store transaction, exported by the SDK's batch processor over
// OTLP/HTTP with protobuf, its default) against the same service without, POST and GET by id on
// SQLite, A/B interleaved, the order of the two swapped every round (ab.ts). The collector is a
// sink process that drops what it gets: the server's own cost is what is measured. With traces
// off the service loads none of OpenTelemetry, so off is the service as it was (docs/performance.md).
import { join } from 'node:path';
import { twoWays } from './ab.js';
import { startOtlpSink, startService } from './processes.js';
import { fmt, median } from './report.js';
import type { WriteBench } from './writes.js';

export async function tracesCost(b: WriteBench): Promise<void> {
  console.log(
    `\n## Traces on and off, SQLite, ${b.connections} connections, ${b.rounds} rounds of ${b.seconds} s, A/B interleaved\n`,
  );
  const sink = await startOtlpSink();
  try {
    // Start to ready on a fresh store, each way in turn: what loading the SDK adds to a start.
    const ready = { off: [] as number[], on: [] as number[] };
    for (let i = 0; i < 3; i++) {
      for (const [name, env] of [
        ['off', {}],
        ['on', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }],
      ] as const) {
        const db = `sqlite:${join(b.dir, `traces-start-${name}-${i}.db`)}`;
        const s = await startService({ DATABASE_URL: db, PLANT_STORE_TOKEN: b.token, ...env }, false);
        ready[name].push(s.readyMs);
        await s.stop();
      }
    }
    console.log(
      `start to ready, fresh store (median of 3): off ${fmt(median(ready.off))} ms, on ${fmt(median(ready.on))} ms\n`,
    );
    await twoWays(
      b,
      'traces',
      [{ name: 'traces off' }, { name: 'traces on', env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } }],
      ['POST', 'GET'],
    );
  } finally {
    await sink.stop();
  }
}
