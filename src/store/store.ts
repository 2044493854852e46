import type { RestoreTarget, StoreSnapshot } from './backup.js';
import type { ChangeLog } from './changes.js';
import type { PlantStore } from './plants.js';
import type { StoreKind } from './schema-versions.js';
import type { TokenStore } from './tokens.js';
import type { WebhookStore } from './webhooks.js';

/**
 * Everything the service keeps, by kind of record, and what the store as a whole does. Each
 * method that changes data resolves only after the change is durable, and is atomic on its own.
 * Outages reject with the domain's StoreUnavailableError.
 */
export interface Store {
  /** Which kind of store this is: its schema versions are numbered per kind. */
  readonly kind: StoreKind;

  readonly plants: PlantStore;
  readonly tokens: TokenStore;
  readonly webhooks: WebhookStore;
  readonly changes: ChangeLog;

  /**
   * Where one read of plants or of the change log goes. With PostgreSQL standbys
   * (DATABASE_READ_URL): one that has replayed every change up to `atLeast` (a client's
   * `Change-Position`; any when undefined), is reachable and lags at most DATABASE_READ_MAX_LAG;
   * else the primary. A read of several statements (a page and its position) makes them all on
   * the database it was given. Without standbys, and on SQLite (one machine, where a read sees
   * every acknowledged write), the store itself.
   */
  reads(atLeast?: bigint): Promise<StoreReads>;
  /** The databases that serve reads and how each stands (metrics); none for a store kept in files. */
  readHosts(): ReadHost[];

  /** Applies pending schema migrations; resolves to the number applied. */
  migrate(): Promise<number>;
  /** Rejects when the storage cannot be reached, or cannot take writes (a full disk, a read-only standby). */
  ping(): Promise<StoreHealth>;
  close(): Promise<void>;
  /**
   * PostgreSQL with several hosts: `listener` is told of each host found to be the primary, and
   * of the one before (undefined at start), for the log.
   */
  watchPrimary?(listener: (primary: string, previous: string | undefined) => void): void;
  /**
   * PostgreSQL with standbys (DATABASE_READ_URL): `listener` is told each time a standby is left
   * out of the reads (`why`: unreachable, or its lag past the bound) and when it serves them again.
   */
  watchStandbys?(listener: (change: StandbyChange) => void): void;
  /** A line about the state the store was opened in, for the operator, when something is off. */
  readonly notice: string | undefined;
  /**
   * Work accepted but not yet begun by the store: writes waiting for a commit (SQLite), operations
   * waiting for a pooled connection or a batch (PostgreSQL). How far it has fallen behind
   * (the overload bound, a metric).
   */
  pendingWrites(): number;
  /** Its write transactions committed so far (SQLite: fsyncs) and the writes they made durable. */
  writeStats(): { commits: number; writes: number };
  /** Only a store kept in files of its own has them: SQLite's (see StoreFiles). */
  readonly files: StoreFiles | undefined;

  /**
   * The whole store as it is at one moment, read in one transaction of its own (a backup): later
   * writes, by this process or any other, are not seen. Close it when done.
   */
  openSnapshot(): Promise<StoreSnapshot>;
  /**
   * Runs `work` in one transaction that other writers cannot interleave with (a restore): commits
   * when `work` resolves, changes nothing when it rejects. Writes nothing to the change log, and
   * starts a new one.
   */
  restoreInto<T>(work: (target: RestoreTarget) => Promise<T>): Promise<T>;
}

/** What a store that answers a ping says about itself. */
export interface StoreHealth {
  /** PostgreSQL: the host (as DATABASE_URL names it) that is the primary, which writes go to. */
  primary?: string;
}

/** The reads a standby may serve: plants by id and by page, and the change log by position. */
export interface StoreReads {
  plants: Pick<PlantStore, 'get' | 'list'>;
  changes: Pick<ChangeLog, 'bounds' | 'read'>;
}

/** One database that serves reads, as /metrics shows it. */
/** A standby that stopped or started serving reads; `why` says what left it out. */
export interface StandbyChange {
  host: string;
  usable: boolean;
  why?: string;
}

export interface ReadHost {
  /** `host:port`. */
  host: string;
  role: 'primary' | 'standby';
  /** Reads sent to it since start (a read a standby failed, then made on the primary, counts on both). */
  reads: number;
  /** A standby's: how far behind the primary it is (Infinity when not known). */
  lagMs?: number;
  /** A standby's: whether reads may go to it now (reachable, and within DATABASE_READ_MAX_LAG). */
  usable?: boolean;
}

/** What a store kept in files of its own (SQLite's file, its -wal and -shm) can do with them. */
export interface StoreFiles {
  /**
   * Closes the store and removes its files, and the directory made for them, if opening it
   * created them and it still holds nothing: a command that failed (a refused restore) leaves
   * nothing behind.
   */
  discardIfNew(): Promise<void>;
}
