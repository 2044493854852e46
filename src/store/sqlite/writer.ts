import type Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { TraceContext, Tracing } from '../../tracing/tracing.js';
import type { WalSync } from './wal-sync.js';

/** SQLite failures that mean "storage unavailable" (503) rather than a bug (500). */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOMEM)/;

/**
 * Failures of the storage under the store (no room, a quota, a file-size limit, an I/O error), as
 * opposed to a lock held elsewhere: until a commit succeeds again the store cannot take writes.
 */
const STORAGE = /^SQLITE_(IOERR|FULL)/;

/** How long a write waits for another process (a command) to let go of the write lock. */
const LOCK_WAIT_MS = 5_000;

export function sqliteError(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (err instanceof StoreUnavailableError || typeof code !== 'string' || !UNAVAILABLE.test(code)) return err;
  return new StoreUnavailableError(err, code.startsWith('SQLITE_FULL') ? 'the disk is full; retry later' : undefined);
}

/** A synchronous read, as a promise: SQLite's outage codes become StoreUnavailableError. */
export function sqliteRead<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(sqliteError(err));
  }
}

/**
 * What each kind of record works with: reads on the read connection (WAL lets them run while a
 * write is under way); changes through the writer, on the write connection inside its transaction.
 */
export interface SqliteAccess {
  read: Database.Database;
  write: Database.Database;
  writer: SqliteWriter;
}

/** Jobs that can run together: `many` applies its items in order and answers one result each. */
export interface JobKind<I, O> {
  many(items: I[]): O[] | Promise<O[]>;
  /** Each item changes a few rows (a plant write): see `SMALL_BATCH`. */
  small?: true;
}

/**
 * A transaction of at most this many small jobs keeps its savepoint journal in memory. The
 * journal holds the first image of every page a savepoint changes, for a rollback to it. Past
 * 64 KiB SQLite spills it to a temporary file, opened, written a page at a time and closed
 * again in every commit of a busy store (under renames, about as many pages as into the WAL).
 * In memory that file's work is gone (docs/performance.md has the measure); it holds at most
 * about this many writes' pages (a few MB).
 * Anything else (an import, a restore, whose CREATE INDEX sorts every plant) keeps the file:
 * `temp_store` puts SQLite's sorts in memory too.
 */
const SMALL_BATCH = 512;

interface Job {
  kind: JobKind<unknown, unknown>;
  item: unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** The trace of the request that queued it, when traces are on and it was queued in one. */
  trace: TraceContext | undefined;
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

const traces = (jobs: Job[]) => jobs.map((job) => job.trace);

/** One-off jobs: each a function, run one after the other. */
const CALLS: JobKind<() => unknown, unknown> = {
  async many(calls) {
    const out: unknown[] = [];
    for (const call of calls) out.push(await call());
    return out;
  },
};

/**
 * The one writer of the store, on the thread that serves requests. Jobs queued in one turn of
 * the event loop run in one transaction: consecutive jobs of one kind together, inside a
 * savepoint; if they fail, each again alone in its own, so a job that fails fails alone. The
 * commit is a write into the WAL, and the jobs settle once `WalSync` has made that commit
 * durable. While one commit waits for its fsync the next batch already runs.
 */
export class SqliteWriter {
  private queue: Job[] = [];
  private running = false;
  private scheduled = false;
  private waitingForSync = 0;
  private closing = false;
  private journalInMemory = false;
  /** Jobs that have been made durable. */
  writes = 0;
  /** Why the last commit failed, when the storage failed it and none has succeeded since. */
  storageFailure: StoreUnavailableError | undefined;
  /**
   * The storage failed a commit, and the disk has not had room for a checkpoint since: commits
   * do not checkpoint meanwhile (see holdCheckpoints).
   */
  private short = false;
  /** SQLITE_CHECKPOINT_PAGES, as the store set it on the write connection. */
  private readonly checkpointPages: number;
  /**
   * Called as each commit returns, still on the write connection; what it returns is called once
   * that commit is durable (the change log's horizon: changes.ts).
   */
  onCommit: (() => () => void) | undefined;
  private readonly stmt;

  constructor(
    private readonly db: Database.Database,
    private readonly sync: WalSync,
    /** Whether the disk has room for a checkpoint of the WAL as it is to finish (checkpoint-room.ts). */
    private readonly checkpointFits: () => boolean,
    /** Traces, when on: each transaction's span, in the traces of the jobs it carries. */
    private readonly tracing?: Tracing,
  ) {
    // A busy lock is waited for asynchronously below, never by blocking the event loop.
    db.pragma('busy_timeout = 0');
    this.checkpointPages = Number(db.pragma('wal_autocheckpoint', { simple: true }));
    this.stmt = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT job'),
      release: db.prepare('RELEASE job'),
      rollbackJob: db.prepare('ROLLBACK TO job'),
    };
  }

  /** Writes accepted and not yet durable: queued, in the transaction under way, or waiting for the fsync. */
  get pending(): number {
    return this.queue.length + this.waitingForSync;
  }

  /** Runs `job` in a transaction on the write connection; resolves once its commit is durable. */
  run<T>(job: () => T | Promise<T>): Promise<T> {
    return this.add(CALLS as JobKind<() => T | Promise<T>, T>, job);
  }

  /** Applies `item` with the other items of its kind queued beside it; resolves once durable. */
  add<I, O>(kind: JobKind<I, O>, item: I): Promise<O> {
    if (this.closing) return Promise.reject(new StoreUnavailableError(new Error('the store is closing')));
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ kind, item, resolve, reject, trace: this.tracing?.current() } as Job);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.running || this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // Requests read in the same turn of the event loop join one transaction.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.running || this.queue.length === 0) return;
    this.running = true;
    const batch = this.queue;
    this.queue = [];
    this.waitingForSync += batch.length;
    let settled: Settled[] | undefined;
    let whenDurable: (() => void) | undefined;
    // One span for the transaction and its fsync, in the trace of its first traced job, linked to the others'.
    const span = this.tracing?.transaction('sqlite', traces(batch));
    let failure: unknown;
    try {
      this.keepJournalInMemory(batch.length <= SMALL_BATCH && batch.every((job) => job.kind.small));
      if (this.short) this.holdCheckpoints();
      await this.begin();
      settled = [];
      for (let i = 0; i < batch.length;) {
        let j = i + 1;
        while (j < batch.length && batch[j]!.kind === batch[i]!.kind) j++;
        settled.push(...(await this.group(batch.slice(i, j))));
        i = j;
      }
      this.stmt.commit.run();
      whenDurable = this.onCommit?.();
    } catch (err) {
      if (this.db.inTransaction) this.stmt.rollback.run();
      const error = this.failure(err);
      failure = error;
      settled = batch.map(() => ({ ok: false, error }));
    }
    const commit = this.sync.commit();
    this.running = false;
    this.schedule();
    try {
      if (settled.some((s) => s.ok)) {
        await this.sync.durable(commit);
        this.storageFailure = undefined;
      }
      whenDurable?.();
    } catch (err) {
      failure = new StoreUnavailableError(err);
      settled = batch.map(() => ({ ok: false, error: failure }));
    }
    span?.end(failure);
    this.waitingForSync -= batch.length;
    batch.forEach((job, i) => {
      const s = settled[i]!;
      if (s.ok) {
        this.writes++;
        job.resolve(s.value);
      } else job.reject(s.error);
    });
  }

  /** Consecutive jobs of one kind, together; if that fails, each alone. */
  private async group(jobs: Job[]): Promise<Settled[]> {
    const { kind } = jobs[0]!;
    const together = await this.savepoint(() => kind.many(jobs.map((j) => j.item)));
    if (together.ok) return (together.value as unknown[]).map((value) => ({ ok: true, value }));
    if (jobs.length === 1) return [together];
    const alone: Settled[] = [];
    for (const job of jobs) {
      const one = await this.savepoint(async () => (await kind.many([job.item]))[0]);
      alone.push(one);
    }
    return alone;
  }

  private async savepoint(work: () => unknown): Promise<Settled> {
    this.stmt.savepoint.run();
    try {
      const value = await work();
      this.stmt.release.run();
      return { ok: true, value };
    } catch (err) {
      this.stmt.rollbackJob.run();
      this.stmt.release.run();
      return { ok: false, error: this.failure(err) };
    }
  }

  /** What a failed statement means for its writes; a failure of the storage is kept for readiness. */
  private failure(err: unknown): unknown {
    const error = sqliteError(err);
    if (STORAGE.test(String((err as { code?: unknown }).code))) {
      this.storageFailure = error as StoreUnavailableError;
      this.short = true;
    }
    return error;
  }

  /**
   * A commit that takes the WAL past SQLITE_CHECKPOINT_PAGES copies it into the database file
   * (SQLite's automatic checkpoint), which grows that file by every page the WAL adds to it
   * before the WAL can be written from its start again. On a disk the WAL filled, that copy
   * cannot finish: it keeps what it wrote, and SQLite does not say it failed. Every commit after
   * it started it again, so the room an operator freed went into the copy, and the writes that
   * would have fitted in the WAL were refused. After a failed commit, commits checkpoint only
   * once the disk has room for the copy to finish; until then the WAL grows, as without them.
   */
  private holdCheckpoints(): void {
    const fits = this.checkpointFits();
    this.db.pragma(`wal_autocheckpoint = ${fits ? this.checkpointPages : 0}`);
    if (fits) this.short = false;
  }

  private keepJournalInMemory(inMemory: boolean): void {
    if (inMemory === this.journalInMemory) return;
    // SQLite applies this pragma as it compiles it (a prepared one would do nothing when run),
    // and reads it as the next transaction begins.
    this.db.exec(`PRAGMA temp_store = ${inMemory ? 'MEMORY' : 'DEFAULT'}`);
    this.journalInMemory = inMemory;
  }

  /** BEGIN IMMEDIATE; while another process holds the write lock, tries again on a timer. */
  private async begin(): Promise<void> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
      try {
        this.stmt.begin.run();
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  /** Lets the queued writes commit and become durable, then refuses new ones. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.running || this.scheduled || this.queue.length || this.waitingForSync) {
      await new Promise((r) => setImmediate(r));
    }
  }
}
