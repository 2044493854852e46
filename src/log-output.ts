// Where the log's lines go: stdout, written asynchronously and in order (the lines that arrive
// while a write is under way go out together in the next), and what is left written at once when
// the process exits. Unlike pino's own destination, which retries a failed write every 100 ms for
// as long as it fails, it drops its lines once the output has gone (the terminal that ran the
// server closed: EIO; the reader of a pipe gone: EPIPE): a log that cannot be written is lost,
// and must not keep a stopping server from exiting.
import { write, writeSync } from 'node:fs';

/** A full pipe (EAGAIN, when stdout is non-blocking) is tried again this often... */
const FULL_RETRY_MS = 10;
/** ...and, at exit, when nothing else can run, for at most this long. */
const EXIT_WAIT_MS = 1_000;

const isFull = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code === 'EAGAIN';

/** A pino destination on a file descriptor that an output gone away cannot hold up. */
export class LogOutput {
  private queued: string[] = [];
  /** The bytes of the write under way, or undefined when none is. */
  private writing: Buffer | undefined;
  private gone = false;
  private readonly flushed: (() => void)[] = [];

  constructor(private readonly fd: number) {
    process.on('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    if (this.gone) return true;
    this.queued.push(line);
    if (!this.writing) this.writeNext();
    return true;
  }

  /** Calls `done` once every line written so far is out, or lost with the output (pino's `logger.flush`). */
  flush(done: () => void): void {
    if (this.gone || (!this.writing && this.queued.length === 0)) done();
    else this.flushed.push(done);
  }

  private writeNext(): void {
    if (this.queued.length === 0) {
      this.writing = undefined;
      for (const done of this.flushed.splice(0)) done();
      return;
    }
    this.writing = Buffer.from(this.queued.join(''));
    this.queued = [];
    this.writeOut();
  }

  private writeOut(): void {
    write(this.fd, this.writing!, (err, written) => {
      if (this.gone) return;
      if (isFull(err)) {
        setTimeout(() => this.writeOut(), FULL_RETRY_MS).unref();
        return;
      }
      if (err) return this.goAway();
      this.writing = this.writing!.subarray(written);
      if (this.writing.length > 0) this.writeOut();
      else this.writeNext();
    });
  }

  /**
   * At exit: the lines not yet handed to a write, synchronously (the write under way, if any,
   * completes on its own). Given up at the first failure, or after EXIT_WAIT_MS of a full pipe.
   */
  private flushSync(): void {
    if (this.gone || this.queued.length === 0) return;
    const rest = Buffer.from(this.queued.join(''));
    this.queued = [];
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
    this.queued = [];
    this.writing = undefined;
    for (const done of this.flushed.splice(0)) done();
  }
}

let stdout: LogOutput | undefined;

/** The process's one output on stdout (every logger of the process shares it, in order). */
export function stdoutOutput(): LogOutput {
  return (stdout ??= new LogOutput(1));
}
