// Where the log's lines go: stdout, written asynchronously and in order (the lines that arrive
// while a write is under way go out together in the next), and what is left written at once when
// the process exits. Unlike pino's own destination, which retries a failed write every 100 ms for
// as long as it fails, it drops its lines once the output has gone (the terminal that ran the
// server closed: EIO; the reader of a pipe gone: EPIPE): a log that cannot be written is lost,
// and must not keep a stopping server from exiting.
import { write, writeSync } from 'node:fs';

/**
 * At most one write starts in this time, unless a chunk's worth waits: a busy server's lines go
 * out together in a few dozen writes a second instead of a write each (each a system call on
 * libuv's threads), while a line after a quiet moment (the "listening" line) goes out at once.
 */
const GATHER_MS = 20;
/** A full pipe (EAGAIN, when stdout is non-blocking) is tried again this often... */
const FULL_RETRY_MS = 10;
/** ...and, at exit, when nothing else can run, for at most this long. */
const EXIT_WAIT_MS = 1_000;

const isFull = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code === 'EAGAIN';

/**
 * The lines waiting for the write under way are copied out of V8's heap at once, into chunks of
 * this size: kept as strings, a busy server's lines (one per request) lived through the young
 * generation's collections while a pipe or terminal was slow to take them, were promoted, and
 * the old generation filled and was collected every few hundred milliseconds: the server ran at
 * two speeds, drawn at start (docs/performance.md, "Why a start draws one of two states").
 */
const CHUNK_BYTES = 64 * 1024;

/** A pino destination on a file descriptor that an output gone away cannot hold up. */
export class LogOutput {
  /** Chunks filled and waiting, in order; the last is being filled: `used` bytes of it, `room` free. */
  private queued: Buffer[] = [];
  private used = 0;
  private room = 0;
  /** The bytes of the write under way, or undefined when none is. */
  private writing: Buffer | undefined;
  private gone = false;
  private gathering: NodeJS.Timeout | undefined;
  private lastWriteAt = 0;
  private readonly flushed: (() => void)[] = [];

  /** `writeTo` is `fs.write` but in tests, which count the writes. */
  constructor(
    private readonly fd: number,
    private readonly writeTo: typeof write = write,
  ) {
    process.on('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    if (this.gone) return true;
    this.append(line);
    if (!this.writing) this.writeSoon();
    return true;
  }

  /** Calls `done` once every line written so far is out, or lost with the output (pino's `logger.flush`). */
  flush(done: () => void): void {
    if (this.gone || (!this.writing && this.queued.length === 0)) return done();
    this.flushed.push(done);
    if (!this.writing) this.writeNext();
  }

  /** Writes what is queued now if a chunk's worth waits or the last write is GATHER_MS old; else then. */
  private writeSoon(): void {
    const wait = this.lastWriteAt + GATHER_MS - Date.now();
    if (this.queued.length !== 1 || wait <= 0) return this.writeNext();
    this.gathering ??= setTimeout(() => this.writeNext(), wait).unref();
  }

  /** Copies `line` into the chunk being filled (a line too long for one gets a buffer of its own). */
  private append(line: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: room for that many always holds the line.
    const most = line.length * 3;
    const last = this.queued.length - 1;
    if (this.room >= most) {
      const n = this.queued[last]!.write(line, this.used);
      this.used += n;
      this.room -= n;
      return;
    }
    if (last >= 0) this.queued[last] = this.queued[last]!.subarray(0, this.used);
    if (most > CHUNK_BYTES) {
      const own = Buffer.from(line);
      this.queued.push(own);
      this.used = own.length;
      this.room = 0;
      return;
    }
    const chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    this.used = chunk.write(line, 0);
    this.room = CHUNK_BYTES - this.used;
    this.queued.push(chunk);
  }

  /** Everything queued, as one buffer, and the queue emptied. */
  private takeQueued(): Buffer {
    const last = this.queued.length - 1;
    this.queued[last] = this.queued[last]!.subarray(0, this.used);
    const all = this.queued.length === 1 ? this.queued[0]! : Buffer.concat(this.queued);
    this.queued = [];
    this.used = 0;
    this.room = 0;
    return all;
  }

  private writeNext(): void {
    clearTimeout(this.gathering);
    this.gathering = undefined;
    if (this.queued.length === 0) {
      this.writing = undefined;
      for (const done of this.flushed.splice(0)) done();
      return;
    }
    this.writing = this.takeQueued();
    this.lastWriteAt = Date.now();
    this.writeOut();
  }

  private writeOut(): void {
    this.writeTo(this.fd, this.writing!, (err, written) => {
      if (this.gone) return;
      if (isFull(err)) {
        setTimeout(() => this.writeOut(), FULL_RETRY_MS).unref();
        return;
      }
      if (err) return this.goAway();
      this.writing = this.writing!.subarray(written);
      if (this.writing.length > 0) this.writeOut();
      else if (this.flushed.length > 0) this.writeNext();
      else {
        this.writing = undefined;
        this.writeSoon();
      }
    });
  }

  /**
   * At exit: the lines not yet handed to a write, synchronously (the write under way, if any,
   * completes on its own). Given up at the first failure, or after EXIT_WAIT_MS of a full pipe.
   */
  private flushSync(): void {
    if (this.gone || this.queued.length === 0) return;
    const rest = this.takeQueued();
    const pause = new Int32Array(new SharedArrayBuffer(4));
    let offset = 0;
    for (let waited = 0; offset < rest.length;) {
      try {
        offset += writeSync(this.fd, rest, offset);
      } catch (err) {
        if (!isFull(err) || waited >= EXIT_WAIT_MS) return this.goAway();
        Atomics.wait(pause, 0, 0, FULL_RETRY_MS);
        waited += FULL_RETRY_MS;
      }
    }
  }

  private goAway(): void {
    this.gone = true;
    clearTimeout(this.gathering);
    this.queued = [];
    this.used = 0;
    this.room = 0;
    this.writing = undefined;
    for (const done of this.flushed.splice(0)) done();
  }
}

let stdout: LogOutput | undefined;

/** The process's one output on stdout (every logger of the process shares it, in order). */
export function stdoutOutput(): LogOutput {
  return (stdout ??= new LogOutput(1));
}
