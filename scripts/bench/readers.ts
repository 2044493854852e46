// The bench's side of the stream reader (stream-reader.ts): starts it, opens and closes its
// streams, tells it when each POST was answered, and reads back what its streams received.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { statFields, TICKS } from './cpu.js';
import type { ReaderCommand, ReaderReport } from './stream-reader.js';

/** The same clock as the reader's: see stream-reader.ts. */
const now = () => performance.timeOrigin + performance.now();

export class Readers {
  private readonly child: ChildProcess = fork(new URL('./stream-reader.ts', import.meta.url).pathname, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  /** Answers not yet sent to the reader: position, and when the answer came. */
  private answers: [number, number][] = [];
  private flusher: NodeJS.Timeout | undefined;
  /** Answers recorded since `follow`. */
  told = 0;
  /** Opens answered 503 (the server's overload guard) and tried again after Retry-After, as EventSource would. */
  refusals = 0;
  /** Streams opened with an `origin` header whose answer allowed that origin (CORS). */
  allowed = 0;

  /** Opens `streams` streams of GET /plants/changes`query`, with `headers` besides the token. */
  async open(
    url: string,
    token: string,
    streams: number,
    query = '',
    headers?: Record<string, string>,
  ): Promise<number> {
    const opened = await this.ask<{ streams: number; refusals: number; allowed: number }>(
      { open: { url, token, streams, query, ...(headers && { headers }) } },
      'opened',
    );
    this.refusals += opened.refusals;
    this.allowed += opened.allowed;
    return opened.streams;
  }

  close(): Promise<void> {
    return this.ask({ close: true }, 'closed');
  }

  /**
   * Starts a load's record: an onResponse for it (load.ts) that notes each created plant's
   * position and when its answer came, sent to the reader every 50 ms (one IPC message per
   * answer would cost the load generator more than the answer).
   */
  follow(): (status: number, headers: IncomingHttpHeaders) => void {
    this.told = 0;
    this.flusher = setInterval(() => this.flush(), 50);
    return this.record;
  }

  /** Ends the record and resolves once each answered change has reached every stream, or the reader gave up. */
  async report(streams: number): Promise<ReaderReport & { cpuTicks: number }> {
    clearInterval(this.flusher);
    this.flush();
    const r = await this.ask<ReaderReport>({ report: { expect: this.told * streams } }, 'report');
    // An empty histogram's NaN comes over IPC as null.
    for (const k of ['p50', 'p99', 'max'] as const) r[k] ??= NaN;
    return { ...r, cpuTicks: this.cpuTicks() };
  }

  /** Microseconds of the reader's CPU between two of its tick counts. */
  static us = (ticks: number) => (ticks * 1e6) / TICKS;

  cpuTicks(): number {
    return statFields(readFileSync(`/proc/${this.child.pid}/stat`, 'utf8')).own;
  }

  kill(): void {
    this.child.kill();
  }

  private readonly record = (status: number, headers: IncomingHttpHeaders): void => {
    const position = headers['change-position'];
    if (status < 200 || status >= 300 || typeof position !== 'string') return;
    this.answers.push([Number(position), now()]);
    this.told++;
  };

  private flush(): void {
    if (this.answers.length) this.child.send({ answered: this.answers.splice(0) } satisfies ReaderCommand);
  }

  private ask<T>(command: ReaderCommand, key: string): Promise<T> {
    this.child.send(command);
    return new Promise((resolve, reject) => {
      const on = (m: Record<string, unknown>) => {
        if (!(key in m) && !('error' in m)) return;
        this.child.off('message', on);
        if ('error' in m) reject(new Error(`stream reader: ${String(m.error)}`));
        else resolve(m[key] as T);
      };
      this.child.on('message', on);
    });
  }
}
