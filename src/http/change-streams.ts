import type { ServerResponse } from 'node:http';
import type { ChangeFilter } from '../domain/change.js';
import { ForbiddenError, UnauthenticatedError, UnavailableError } from '../domain/errors.js';
import { readAfter, type Feed } from '../use-cases/read-changes.js';

/** A comment line at least this often keeps proxies from closing an idle stream (the product says 15 s). */
export const HEARTBEAT_MS = 10_000;
/** How often the credentials of open streams are checked again: revoked or expired, closed within a second. */
export const RECHECK_MS = 250;
/** A stream whose reader leaves this much unread is closed: its reader resumes with Last-Event-ID. */
export const MAX_UNREAD_BYTES = 1024 * 1024;
/**
 * A reader that takes nothing for this long while events wait for it is closed too: the stream
 * stops writing once the socket's buffer is full, so a stalled reader holds no more memory, but
 * it holds a stream of CHANGES_MAX_STREAMS and falls further behind.
 */
export const STALL_MS = 5_000;
/** Changes written per read of the log. */
const BATCH = 500;

interface Stream {
  res: ServerResponse;
  /** The bearer credential it was opened with, checked again every RECHECK_MS. */
  credential: string;
  filter: ChangeFilter;
  after: bigint;
  /** Stops its waits when it closes. */
  stop: AbortController;
  waitingForDrain: boolean;
}

export interface StreamOptions {
  max: number;
  /** Rejects when the credential no longer grants the operation (revoked, expired). */
  verify: (credential: string) => Promise<unknown>;
  onError: (err: unknown) => void;
}

/**
 * The open Server-Sent Events streams of `GET /plants/changes` on this instance: each is fed
 * from the log past its position, reading from this instance's memory of the latest changes
 * (feed/hub.ts), so a new change costs one read of the store for all of them. A reader that
 * falls behind is closed, never buffered without bound; a credential that stops being valid
 * closes its streams; closing the server ends them all.
 */
export class ChangeStreams {
  private readonly streams = new Set<Stream>();
  private readonly timers: NodeJS.Timeout[];
  private checking = false;

  constructor(
    private readonly feed: Feed,
    private readonly options: StreamOptions,
  ) {
    this.timers = [
      setInterval(() => this.heartbeat(), HEARTBEAT_MS),
      setInterval(() => void this.recheck(), RECHECK_MS),
    ];
    for (const t of this.timers) t.unref();
  }

  get size(): number {
    return this.streams.size;
  }

  /** Refuses past CHANGES_MAX_STREAMS, before anything is sent. */
  admit(): void {
    if (this.streams.size >= this.options.max) {
      throw new UnavailableError(
        `this instance has its most change streams open (${this.options.max}); retry later`,
        5,
      );
    }
  }

  /** Feeds `res`, whose headers are sent, from `after` on until it closes. */
  open(res: ServerResponse, credential: string, after: bigint, filter: ChangeFilter): void {
    const stream: Stream = { res, credential, filter, after, stop: new AbortController(), waitingForDrain: false };
    this.streams.add(stream);
    res.once('close', () => {
      stream.stop.abort();
      this.streams.delete(stream);
    });
    void this.pump(stream).catch((err: unknown) => {
      this.options.onError(err);
      this.close(stream);
    });
  }

  /** Ends every stream (the server is closing): their readers reconnect elsewhere or later. */
  closeAll(): void {
    for (const s of this.streams) this.close(s);
    for (const t of this.timers) clearInterval(t);
  }

  private close(stream: Stream, now = false): void {
    stream.stop.abort();
    this.streams.delete(stream);
    if (now) stream.res.destroy();
    else stream.res.end();
  }

  private async pump(stream: Stream): Promise<void> {
    const { hub } = this.feed;
    const { signal } = stream.stop;
    while (!signal.aborted) {
      // Streams follow what the hub has read into memory: one read of the store for all of them.
      if (stream.after >= hub.current) {
        await hub.waitPast(stream.after, HEARTBEAT_MS, signal);
        continue;
      }
      const { changes, scannedTo } = await readAfter(this.feed, stream.after, BATCH, stream.filter, hub.current);
      stream.after = scannedTo;
      if (changes.length === 0 || signal.aborted) continue;
      let text = '';
      for (const c of changes) text += `id: ${c.position}\nevent: ${c.type}\ndata: ${c.json}\n\n`;
      if (!this.write(stream, text)) await this.drained(stream);
    }
  }

  /** Writes unless the reader has left too much unread: then it is closed. False: wait for the drain. */
  private write(stream: Stream, text: string): boolean {
    if (stream.res.writableLength > MAX_UNREAD_BYTES) {
      this.close(stream, true);
      return true;
    }
    return stream.res.write(text);
  }

  private drained(stream: Stream): Promise<void> {
    stream.waitingForDrain = true;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stream.res.off('drain', done);
        stream.res.off('close', done);
        stream.waitingForDrain = false;
        resolve();
      };
      const timer = setTimeout(() => {
        this.close(stream, true);
        done();
      }, STALL_MS);
      stream.res.once('drain', done);
      stream.res.once('close', done);
    });
  }

  private heartbeat(): void {
    for (const s of this.streams) if (!s.waitingForDrain) this.write(s, ': keep-alive\n\n');
  }

  /**
   * One check per credential, however many streams it holds open. A credential refused closes
   * its streams; a check that cannot be made (the store is unavailable) leaves them open.
   */
  private async recheck(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      await this.checkEach();
    } finally {
      this.checking = false;
    }
  }

  private async checkEach(): Promise<void> {
    const byCredential = new Map<string, Stream[]>();
    for (const s of this.streams) byCredential.set(s.credential, [...(byCredential.get(s.credential) ?? []), s]);
    await Promise.all(
      [...byCredential].map(async ([credential, streams]) => {
        try {
          await this.options.verify(credential);
        } catch (err) {
          if (err instanceof UnauthenticatedError || err instanceof ForbiddenError)
            for (const s of streams) this.close(s);
        }
      }),
    );
  }
}
