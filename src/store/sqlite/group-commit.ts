import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { WriteOp, WriteResult } from './write-ops.js';
import type { BatchReply } from './writer-worker.js';

interface Pending {
  op: WriteOp;
  resolve: (result: WriteResult) => void;
  reject: (err: Error) => void;
}

// Built, the worker is the .js beside this file. Run from source (tests, under tsx) it is the
// .ts file, and Node 20 does not pass the loader to a worker's entry, so it is registered first.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER = new URL(`./writer-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url);

function startWorker(path: string): Worker {
  if (!FROM_SOURCE) return new Worker(WORKER, { workerData: { path } });
  const boot = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(WORKER.href)}); })`;
  return new Worker(boot, { eval: true, workerData: { path } });
}

/** SQLite failures that mean "storage unavailable" (503) rather than a bug (500). */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOMEM)/;

/**
 * Group commit. Writes that arrive while a commit is in flight wait for it, then all go to the
 * writer thread as one batch: one transaction, one fsync. Nothing waits on a timer, so a lone
 * write commits at once, and under load each fsync carries as many writes as arrived during
 * the previous one. A promise settles only after its batch's commit returned: on failure every
 * op of the batch is rejected and none was applied.
 */
export class GroupCommitWriter {
  private worker: Worker | undefined;
  private queue: Pending[] = [];
  private inFlight: Pending[] | undefined;
  private closing = false;
  /** Batches committed so far: with `writes`, shows how many writes each fsync carried. */
  commits = 0;
  writes = 0;

  constructor(private readonly path: string) {}

  /** Writes waiting for a commit: the one in flight and those queued behind it. */
  get pending(): number {
    return this.queue.length + (this.inFlight?.length ?? 0);
  }

  /** Starts the writer thread ahead of the first write; it boots on another core meanwhile. */
  warmUp(): void {
    if (!this.closing) this.ensureWorker().unref();
  }

  submit(op: WriteOp): Promise<WriteResult> {
    if (this.closing) return Promise.reject(new StoreUnavailableError(new Error('the store is closing')));
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      if (!this.inFlight) this.flush();
    });
  }

  private flush(): void {
    if (this.queue.length === 0) {
      this.worker?.unref();
      return;
    }
    const batch = this.queue;
    this.queue = [];
    this.inFlight = batch;
    const worker = this.ensureWorker();
    worker.ref();
    worker.postMessage(batch.map((p) => p.op));
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(this.path);
    worker.on('message', (reply: BatchReply) => this.settle(reply));
    worker.on('error', (err) => this.lose(worker, err));
    worker.on('exit', (code) => this.lose(worker, new Error(`the writer thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private settle(reply: BatchReply): void {
    const batch = this.inFlight ?? [];
    this.inFlight = undefined;
    if ('error' in reply) {
      const err =
        reply.error.code && UNAVAILABLE.test(reply.error.code)
          ? new StoreUnavailableError(new Error(reply.error.message))
          : Object.assign(new Error(reply.error.message), { code: reply.error.code });
      for (const p of batch) p.reject(err);
    } else {
      this.commits++;
      this.writes += batch.length;
      batch.forEach((p, i) => p.resolve(reply.results[i]));
    }
    this.flush();
  }

  /** A writer thread that dies takes its batch with it (not committed, or unknown): all 503. */
  private lose(worker: Worker, cause: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const batch = this.inFlight ?? [];
    this.inFlight = undefined;
    for (const p of batch) p.reject(new StoreUnavailableError(cause));
    if (!this.closing) this.flush();
  }

  /** Lets the queued writes commit, then stops the writer thread. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.inFlight || this.queue.length) {
      if (!this.inFlight) this.flush();
      await new Promise((r) => setImmediate(r));
    }
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    worker.ref();
    worker.postMessage('close');
    await once(worker, 'exit');
  }
}
