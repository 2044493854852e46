// `node --import tsx scripts/bench/states.ts`: starts the service again and again, as `npm start`
// starts it, each on a fresh SQLite store, drives each with the bench's POST load and prints the
// state each start landed in: the server's CPU per POST, its peak resident memory, and what V8's
// trace says of its collections (scavenges and their mean time, full collections). A server that
// runs at one speed shows one row shape; a start that draws one of two states shows two.
//
// STATES_STARTS (20), STATES_SECONDS (5 s of load after a 2 s warm-up), STATES_FLAGS (more Node
// flags, space-separated, after npm start's: to try V8's).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { load } from './load.js';
import { startService } from './processes.js';
import { fmt, median, table } from './report.js';

const STARTS = Number(process.env.STATES_STARTS ?? 20);
const SECONDS = Number(process.env.STATES_SECONDS ?? 5);
const FLAGS = (process.env.STATES_FLAGS ?? '').split(/\s+/).filter(Boolean);

const token = `pst_${randomBytes(32).toString('base64url')}`;
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

/** Counts V8's collections from `--trace-gc` lines on the server's stdout. */
function gcCounter(stdout: NodeJS.ReadableStream, trace?: string[]) {
  const counts = { scavenges: 0, scavengeMs: 0, fullCollections: 0, pooledMb: 0 };
  let rest = '';
  stdout.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (trace && !line.startsWith('{')) trace.push(line);
      const scavenge = /: Scavenge.*?, ([\d.]+) \/ [\d.]+ ms/.exec(line);
      const pooled = /pooled: ([\d.]+) MB/.exec(line);
      if (pooled) counts.pooledMb = Math.max(counts.pooledMb, Number(pooled[1]));
      if (scavenge) {
        counts.scavenges++;
        counts.scavengeMs += Number(scavenge[1]);
      } else if (/: Mark-Compact/.test(line)) {
        counts.fullCollections++;
      }
    }
  });
  return {
    reset: () => Object.assign(counts, { scavenges: 0, scavengeMs: 0, fullCollections: 0, pooledMb: 0 }),
    read: () => ({ ...counts }),
  };
}

const rows: (string | number)[][] = [];
const cpus: number[] = [];
for (let i = 1; i <= STARTS; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-states-'));
  const service = await startService(
    { DATABASE_URL: `sqlite:${join(dir, 'store.db')}`, PLANT_STORE_TOKEN: token },
    false,
    ['--trace-gc', ...FLAGS],
  );
  // STATES_TRACE=DIR: V8's trace of each start, whole, in DIR/start-N.log.
  const trace = process.env.STATES_TRACE ? [] : undefined;
  const gc = gcCounter(service.proc.stdout!, trace);
  let id = 0;
  const spec = (seconds: number) => ({
    method: 'POST' as const,
    headers,
    next: () => ({ path: '/plants', body: `{"id":${++id},"name":"Monstera","tag":"tropical"}` }),
    seconds,
    connections: 50,
  });
  try {
    await load(service, spec(2));
    gc.reset();
    const r = await load(service, spec(SECONDS));
    const g = gc.read();
    cpus.push(r.cpu.server);
    rows.push([
      String(i),
      Math.round(r.rps),
      fmt(r.cpu.server),
      fmt(r.peakRssMb),
      g.scavenges,
      fmt(g.scavenges ? g.scavengeMs / g.scavenges : 0),
      g.fullCollections,
      g.pooledMb,
      r.p99,
    ]);
  } finally {
    if (trace) writeFileSync(join(process.env.STATES_TRACE!, `start-${i}.log`), trace.join('\n'));
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `\n## ${STARTS} starts under ${SECONDS} s of POST at 50 connections${FLAGS.length ? `, with ${FLAGS.join(' ')}` : ''}\n`,
);
table(
  [
    'start',
    'POST/s',
    'server µs/POST',
    'peak RSS MiB',
    'scavenges',
    'mean scavenge ms',
    'full GCs',
    'V8 pooled MB',
    'p99 ms',
  ],
  rows,
);
const sorted = [...cpus].sort((a, b) => a - b);
console.log(`\nserver µs/POST: min ${fmt(sorted[0]!)}, median ${fmt(median(cpus))}, max ${fmt(sorted.at(-1)!)}`);
