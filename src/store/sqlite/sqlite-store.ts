import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { BackupParts, RestoreTarget, StoreSnapshot } from '../backup.js';
import type { Tracing } from '../../tracing/tracing.js';
import { Acknowledged } from '../acknowledged.js';
import type { ChangeLog } from '../changes.js';
import type { PlantStore } from '../plants.js';
import type { StoreKind } from '../schema-versions.js';
import type { ReadHost, Store, StoreFiles, StoreHealth, StoreReads } from '../store.js';
import type { TokenStore } from '../tokens.js';
import type { WebhookStore } from '../webhooks.js';
import { sqliteRestore, sqliteSnapshot } from './backup.js';
import { sqliteChanges } from './changes.js';
import { checkpointFits, MIN_FREE_BYTES } from './checkpoint-room.js';
import { openConnections, prepareFile, removeCreated, type OpenOptions } from './connection.js';
import { migrate } from './migrations.js';
import { plantsInBackup, sqlitePlants } from './plants.js';
import { sqliteTokens, tokensInBackup } from './tokens.js';
import { endpointsInBackup, sqliteWebhooks } from './webhooks.js';
import { WalSync } from './wal-sync.js';
import { sqliteError, SqliteWriter } from './writer.js';

/** How each kind of record is kept in a backup of this store. */
export const SQLITE_BACKUP: BackupParts<Database.Database> = {
  tokens: tokensInBackup,
  webhooks: endpointsInBackup,
  plants: plantsInBackup,
};

/**
 * The tables no kind's part of a backup covers, and why: every other table of the store belongs
 * to one (test/store/backup.test.ts holds the schema to that).
 */
export const SQLITE_NOT_BACKED_UP: Readonly<Record<string, string>> = {
  changes: 'the change log, which the webhook outbox delivers from: a restored store starts a new one (the manual)',
  deliveries: 'the webhook outbox: deliveries under way are not part of a backup (the manual)',
  change_floor: 'where the change log starts (see changes)',
  stream_tickets: "stream tickets: five minutes' credentials, made again by the pages that need them",
  sqlite_sequence: "SQLite's own: the last number AUTOINCREMENT gave (changes.seq, before migration 6)",
};

/**
 * The embedded store: one SQLite file in WAL mode. Reads run on a connection of their own; every
 * change goes through the writer (one transaction per turn of the event loop, on this thread)
 * and resolves only after an fdatasync of the WAL covered its commit.
 */
export class SqliteStore implements Store {
  readonly kind: StoreKind = 'sqlite';
  private readonly writeDb: Database.Database;
  private readonly readDb: Database.Database;
  /** Opened for this process alone (a full disk at open): no other connection can open the file. */
  private readonly exclusive: boolean;
  /** What opening the store created (the directory, the file), in the order it did. */
  private readonly created: string[];
  readonly notice: string | undefined;
  readonly files: StoreFiles = { discardIfNew: () => this.discardIfNew() };
  private ready:
    | {
        writer: SqliteWriter;
        sync: WalSync;
        plants: PlantStore;
        tokens: TokenStore;
        webhooks: WebhookStore;
        changes: ChangeLog;
      }
    | undefined;

  /** Traces, when on: given to the writer. */
  private readonly tracing: Tracing | undefined;

  constructor(
    readonly path: string,
    options: OpenOptions = { createDirectory: false },
  ) {
    this.created = prepareFile(path, options);
    this.tracing = options.tracing;
    let connections: ReturnType<typeof openConnections>;
    try {
      connections = openConnections(path);
    } catch (err) {
      // A refused open (a Node.js too old for the driver) leaves no empty file or directory behind.
      removeCreated(path, this.created);
      throw err;
    }
    this.writeDb = connections.write;
    this.readDb = connections.read;
    this.exclusive = connections.exclusive;
    // SQLite checkpoints inside the commit that grows the WAL past this many pages, syncing the
    // WAL and then the database file there, on the event loop. At its default of 1,000, a load of
    // renames spent most of its time in those checkpoints; fewer, larger ones copy a page that was
    // rewritten meanwhile once, and sync less often (docs/performance.md). Writes nothing.
    if (options.checkpointPages !== undefined) this.writeDb.pragma(`wal_autocheckpoint = ${options.checkpointPages}`);
    if (connections.exclusive) {
      this.notice =
        'the disk was full when the store was opened: it is open for this process alone (commands cannot open it ' +
        'meanwhile) and writes fail until there is room; restart once there is';
    }
  }

  get plants(): PlantStore {
    return this.s.plants;
  }

  get tokens(): TokenStore {
    return this.s.tokens;
  }

  get webhooks(): WebhookStore {
    return this.s.webhooks;
  }

  get changes(): ChangeLog {
    return this.s.changes;
  }

  /** One machine: a read sees every acknowledged write, whatever position it asks for. */
  async reads(): Promise<StoreReads> {
    return this;
  }

  readHosts(): ReadHost[] {
    return [];
  }

  /** Statements need the tables: they are prepared once the schema is current. */
  private get s() {
    if (!this.ready) throw new Error('the store has not been migrated');
    return this.ready;
  }

  async migrate(): Promise<number> {
    const applied = migrate(this.writeDb);
    const sync = new WalSync(`${this.path}-wal`);
    const writer = new SqliteWriter(this.writeDb, sync, () => checkpointFits(this.writeDb, this.path), this.tracing);
    const access = { read: this.readDb, write: this.writeDb, writer };
    const acknowledged = new Acknowledged();
    this.ready = {
      sync,
      writer,
      plants: sqlitePlants(access, acknowledged),
      tokens: sqliteTokens(access),
      webhooks: sqliteWebhooks(access),
      changes: { ...sqliteChanges(access), onWritten: (listener) => acknowledged.listen(listener) },
    };
    return applied;
  }

  writeStats(): { commits: number; writes: number } {
    return { commits: this.s.sync.syncs, writes: this.s.writer.writes };
  }

  pendingWrites(): number {
    return this.ready?.writer.pending ?? 0;
  }

  /** Reachable, and with room on its disk for writes. */
  async ping(): Promise<StoreHealth> {
    await this.tokens.count();
    if (this.ready?.sync.failure) throw this.ready.sync.failure;
    // The storage failed the last commit (a quota or a file-size limit leaves statfs looking
    // fine): a commit that changes nothing says whether it can take writes again. It rejects
    // while the storage still fails, and a success clears the failure.
    if (this.ready?.writer.storageFailure) {
      this.emptyWal();
      await this.s.writer.run(() => {
        const version = this.writeDb.pragma('user_version', { simple: true }) as number;
        this.writeDb.pragma(`user_version = ${version}`);
      });
    }
    const { bavail, bsize } = await statfs(dirname(this.path));
    const free = bavail * bsize;
    if (free < MIN_FREE_BYTES) {
      throw new StoreUnavailableError(
        undefined,
        `the disk is full (${free} bytes free); writes fail until there is room`,
      );
    }
    return {};
  }

  /**
   * Copies the WAL into the database file and empties it, when the disk has room for that and no
   * lock is held elsewhere (else it stays as it is). A refused commit's pages stay in the WAL past
   * the last commit, and SQLite writes the next commit over them: a page fits there whatever the
   * storage, so readiness's commit said yes while every write still failed. Emptied, the WAL
   * grows for a commit as for a write; and a WAL that reached a file-size limit makes room for
   * writes again, where the database file has it.
   * The copy grows the database file by every page the WAL adds to it before it frees the WAL:
   * on a disk the WAL filled, a copy that cannot finish used up the room an operator freed, on
   * every readiness check, and writes that would have fitted in the WAL never did. Readiness
   * never writes more than it frees: without the room, the WAL stays, and writes go on into it.
   */
  private emptyWal(): void {
    if (!checkpointFits(this.readDb, this.path)) return;
    // Never waits: a lock held elsewhere would stop the event loop meanwhile.
    const wait = this.readDb.pragma('busy_timeout', { simple: true }) as number;
    this.readDb.pragma('busy_timeout = 0');
    try {
      this.readDb.pragma('wal_checkpoint(TRUNCATE)');
    } catch (err) {
      throw sqliteError(err);
    } finally {
      this.readDb.pragma(`busy_timeout = ${wait}`);
    }
  }

  async close(): Promise<void> {
    await this.ready?.writer.close();
    this.ready?.sync.close();
    this.ready = undefined;
    if (this.writeDb.open) this.writeDb.close();
    if (this.readDb.open) this.readDb.close();
  }

  /** See StoreFiles. */
  private async discardIfNew(): Promise<void> {
    // Another process may have opened the new file meanwhile (a server started on it) and written
    // to it: a store that holds something, or cannot be read, stays.
    const empty = this.created.length > 0 && this.ready ? await this.holdsNothing().catch(() => false) : false;
    await this.close();
    if (empty) removeCreated(this.path, this.created);
  }

  /** No kind of record a backup holds has one here. */
  private async holdsNothing(): Promise<boolean> {
    const snapshot = await this.openSnapshot();
    try {
      for (const part of Object.values(snapshot.records)) {
        for await (const page of part.pages()) if (page.length > 0) return false;
      }
      return true;
    } finally {
      await snapshot.close();
    }
  }

  openSnapshot(): Promise<StoreSnapshot> {
    if (!this.ready) return Promise.reject(new Error('the store has not been migrated'));
    // Opened alone, the store has one connection, and a connection of the snapshot's own would
    // find the file locked ("database is locked"): the snapshot reads through the store's. Only
    // `backup` and a refused restore's discardIfNew take snapshots, and neither writes meanwhile.
    return sqliteSnapshot(this.path, SQLITE_BACKUP, this.exclusive ? this.readDb : undefined);
  }

  /** One writer job: the whole restore is one transaction, made durable by one fsync. */
  restoreInto<T>(work: (target: RestoreTarget) => Promise<T>): Promise<T> {
    return this.s.writer.run(() => sqliteRestore(this.writeDb, SQLITE_BACKUP, work));
  }
}
