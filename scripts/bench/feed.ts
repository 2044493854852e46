// The change feed (PRODUCT.md, "The change feed: list, then follow"): with 1,000 Server-Sent
// Events streams of GET /plants/changes open on one instance, POST /plants against the same
// server with none open, in the same rounds (A/B interleaved), at the write section's load; the
// delay from each POST's answer to its event on every stream; and what 1,000 idle streams add to
// the server's resident memory. The streams are read by a child process (stream-reader.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { statFields, TICKS } from './cpu.js';
import { COLUMNS, load, row, type LoadResult } from './load.js';
import { connectOrSkip, SERVER } from './postgres.js';
import { startService } from './processes.js';
import { against, fmt, MB_PER_MIB, median, table } from './report.js';
import { seedStore } from './seed.js';
import type { ReaderCommand, ReaderReport } from './stream-reader.js';
import { refusals, warmUp, writeLoads, writeSpec, type WriteBench } from './writes.js';

export const STREAMS = 1000;
const now = () => performance.timeOrigin + performance.now();

/** Sends `command` to the readers and resolves to their answer's `key`. */
async function ask<T>(reader: ChildProcess, command: ReaderCommand, key: string): Promise<T> {
  reader.send(command);
  return new Promise((resolve, reject) => {
    const on = (m: Record<string, unknown>) => {
      if (!(key in m) && !('error' in m)) return;
      reader.off('message', on);
      if ('error' in m) reject(new Error(`stream reader: ${String(m.error)}`));
      else resolve(m[key] as T);
    };
    reader.on('message', on);
  });
}

/** The server's RSS once it has settled: the median of five readings after two quiet seconds. */
async function settledRss(rssMb: () => number): Promise<number> {
  await sleep(2000);
  const xs: number[] = [];
  for (let i = 0; i < 5; i++, await sleep(200)) xs.push(rssMb());
  return median(xs);
}

interface Answers {
  /** Positions and when their answers came, until sent to the readers. */
  list: [number, number][];
  count: number;
}

/** Records each created plant's position and when its answer came. */
const answered =
  (answers: Answers) =>
  (status: number, headers: IncomingHttpHeaders): void => {
    const position = headers['change-position'];
    if (status < 200 || status >= 300 || typeof position !== 'string') return;
    answers.list.push([Number(position), now()]);
    answers.count++;
  };

const cpuTicks = (pid: number) => statFields(readFileSync(`/proc/${pid}/stat`, 'utf8')).own;

async function feedOn(b: WriteBench, store: string, env: Record<string, string>): Promise<void> {
  console.log(`\n### ${store}\n`);
  // Past the default CHANGES_MAX_STREAMS (1,000), so that all 1,000 open however the last closed.
  const service = await startService({
    ...env,
    PLANT_STORE_TOKEN: b.token,
    CHANGES_MAX_STREAMS: String(STREAMS + 100),
  });
  const reader = fork(new URL('./stream-reader.ts', import.meta.url).pathname, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const spec = writeSpec(b, writeLoads(0));
    await warmUp([[service, spec]], ['POST']);
    const loads: (string | number)[][] = [];
    const rounds: (string | number)[][] = [];
    const ratio: number[] = [];
    const p99: number[] = [];
    const cost: number[] = [];
    const all: LoadResult[] = [];
    let missing = 0;
    for (let round = 1; round <= b.rounds; round++) {
      // Both loads read every answer's position, so the load generator does the same work in each.
      const alone = await load(service, { ...spec('POST'), onResponse: answered({ list: [], count: 0 }) });
      const before = await settledRss(() => service.rssMb());
      await ask(reader, { open: { url: service.url, token: b.token, streams: STREAMS } }, 'opened');
      const after = await settledRss(() => service.rssMb());
      await ask(reader, { report: { expect: 0 } }, 'report');
      const answers: Answers = { list: [], count: 0 };
      // In batches: one IPC message per answer would cost the load generator more than the answer.
      const flush = () =>
        answers.list.length && reader.send({ answered: answers.list.splice(0) } satisfies ReaderCommand);
      const flusher = setInterval(flush, 50);
      const readerTicks = cpuTicks(reader.pid!);
      const streamed = await load(service, { ...spec('POST'), onResponse: answered(answers) });
      clearInterval(flusher);
      flush();
      const told = answers.count;
      const r = await ask<ReaderReport>(reader, { report: { expect: told * STREAMS } }, 'report');
      // An empty histogram's NaN comes over IPC as null.
      for (const k of ['p50', 'p99', 'max'] as const) r[k] ??= NaN;
      const readerUs = ((cpuTicks(reader.pid!) - readerTicks) * 1e6) / TICKS / Math.max(1, told);
      await ask(reader, { close: true }, 'closed');
      all.push(alone, streamed);
      ratio.push(streamed.rps / alone.rps);
      p99.push(r.p99);
      cost.push(after - before);
      missing += told * STREAMS - r.matched;
      loads.push(row(`${round} POST, no streams`, alone), row(`${round} POST, ${STREAMS} streams`, streamed));
      rounds.push([
        round,
        before,
        after,
        after - before,
        told,
        r.events,
        r.matched,
        told * STREAMS - r.matched,
        r.ended,
      ]);
      rounds[rounds.length - 1]!.push(r.p50, r.p99, r.max, readerUs);
      await sleep(1000);
    }
    table(['round / load', ...COLUMNS], loads);
    console.log('');
    table(
      [
        'round',
        'RSS before MiB',
        'RSS streams open',
        'streams MiB',
        'POSTs told',
        'events',
        'of those POSTs',
        'missing',
        'streams ended',
        'delivery p50 ms',
        'p99 ms',
        'max ms',
        'reader CPU us/POST',
      ],
      rounds,
    );
    const mib = median(cost);
    console.log(
      against(`POST with ${STREAMS} streams / with none (median of rounds)`, median(ratio), 'x', 0.8, true) +
        against(`delivery to all ${STREAMS} streams, p99 (median of rounds)`, median(p99), ' ms', 250, false) +
        `\n  from each POST's answer (as the load generator saw it) to its event on each stream; ${missing} deliveries missing in all rounds` +
        against(
          `RSS of ${STREAMS} idle streams (median of rounds), ${fmt(mib)} MiB`,
          mib * MB_PER_MIB,
          ' MB',
          60,
          false,
        ) +
        refusals(all),
    );
  } finally {
    reader.kill();
    await service.stop();
  }
}

export async function changeFeed(b: WriteBench): Promise<void> {
  console.log(
    `\n## The change feed: POST with and without ${STREAMS} SSE streams open, ${b.connections} connections, ${b.rounds} rounds of ${b.seconds} s`,
  );
  const path = join(b.dir, 'feed.db');
  await seedStore(path, 1000, b.token);
  await feedOn(b, 'SQLite', { DATABASE_URL: `sqlite:${path}` });
  if (process.env.BENCH_FEED_POSTGRES !== '1') return;
  const admin = await connectOrSkip();
  if (!admin) return;
  const schema = `bench_feed_${Date.now()}`;
  try {
    await feedOn(b, 'PostgreSQL', { DATABASE_URL: `${SERVER}?schema=${schema}` });
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
