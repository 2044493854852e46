// The change feed's fan-out with CORS_ORIGINS set and not (issue 49): FOLLOWING streams that
// follow everything, opened with the allowed Origin where CORS_ORIGINS is set (their answers then
// carry the CORS headers, which the reader checks) and with neither on the other service, each
// service's held by a reader process of its own (stream-reader.ts, as the feed section's). Per
// round, A/B interleaved: POST at the full load (its rate, each change to every stream), then
// paced at RATE a second (each change's delivery to every stream, from its answer to its event).
import { join } from 'node:path';
import type { Way } from './ab.js';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { startService } from './processes.js';
import { Readers } from './readers.js';
import { fmt, median, table } from './report.js';
import { refusals, warmUp, writeLoads, writeSpec, type WriteBench } from './writes.js';

/** Streams following every change, on each service. */
const FOLLOWING = 200;
/** POSTs a second of the paced load, whose deliveries are timed. */
const RATE = 200;

interface Figures {
  full: LoadResult[];
  paced: LoadResult[];
  p50: number[];
  p99: number[];
  missing: number;
  ended: number;
}

export async function corsFanOut(b: WriteBench, ways: [Way, Way]): Promise<void> {
  console.log(`\n### Fan-out: ${FOLLOWING} streams following everything, POST at the full load and at ${RATE}/s\n`);
  const sides = await Promise.all(
    ways.map(async (way) => {
      const db = join(b.dir, `cors-fanout-${way.name.replace(/\W+/g, '-')}.db`);
      const service = await startService({ DATABASE_URL: `sqlite:${db}`, PLANT_STORE_TOKEN: b.token, ...way.env });
      const figures: Figures = { full: [], paced: [], p50: [], p99: [], missing: 0, ended: 0 };
      return { way, service, readers: new Readers(), spec: writeSpec(b, writeLoads(0), false, way.headers), figures };
    }),
  );
  try {
    await warmUp(
      sides.map((s) => [s.service, s.spec]),
      ['POST'],
    );
    for (const s of sides) await s.readers.open(s.service.url, b.token, FOLLOWING, '', s.way.headers);
    const loads: (string | number)[][] = [];
    const deliveries: (string | number)[][] = [];
    for (let round = 1; round <= b.rounds; round++) {
      for (const { way, service, readers, spec, figures: f } of round % 2 ? sides : [...sides].reverse()) {
        const full = await load(service, { ...spec('POST'), onResponse: readers.follow() });
        // Its events drained before the paced load, which would otherwise time them too.
        await readers.report(FOLLOWING);
        const paced = await load(service, { ...spec('POST'), rate: RATE, onResponse: readers.follow() });
        const r = await readers.report(FOLLOWING);
        const missing = readers.told * FOLLOWING - r.matched;
        f.full.push(full);
        f.paced.push(paced);
        f.p50.push(r.p50);
        f.p99.push(r.p99);
        f.missing += missing;
        f.ended += r.ended;
        loads.push(row(`${round} POST ${way.name}`, full), row(`${round} POST ${RATE}/s ${way.name}`, paced));
        deliveries.push([`${round} ${way.name}`, readers.told, missing, r.ended, r.p50, r.p99, r.max]);
      }
    }
    table(['round / load', ...COLUMNS], loads);
    console.log('');
    table(['round', 'POSTs told', 'missing', 'streams ended', 'delivery p50 ms', 'p99 ms', 'max ms'], deliveries);
    const [a, z] = sides.map((s) => s.figures) as [Figures, Figures];
    const vs = (xa: number[], xz: number[]) => `${fmt(median(xa))} -> ${fmt(median(xz))}`;
    console.log(
      `\nfan-out POST: ${ways[1].name} / ${ways[0].name} ` +
        `${fmt(median(z.full.map((r, i) => r.rps / a.full[i]!.rps)))}x req/s (median of rounds)` +
        `\ndelivery to all ${FOLLOWING} at ${RATE} POST/s: p50 ${vs(a.p50, z.p50)} ms, p99 ${vs(a.p99, z.p99)} ms` +
        ` (medians of rounds); missing ${a.missing} / ${z.missing}, streams ended ${a.ended} / ${z.ended}` +
        `\nstreams whose answer allowed their Origin: ${sides.map((s) => s.readers.allowed).join(' / ')} of ${FOLLOWING}` +
        refusals([...a.full, ...a.paced, ...z.full, ...z.paced]),
    );
  } finally {
    for (const s of sides) {
      s.readers.kill();
      await s.service.stop();
    }
  }
}
