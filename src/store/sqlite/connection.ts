import { closeSync, constants, existsSync, mkdirSync, openSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { StoreMissingError, StoreUnavailableError } from '../../domain/errors.js';
import type { Tracing } from '../../tracing/tracing.js';

export interface OpenOptions {
  /** Create the file's directory (owner-only) when it is missing: only the default store's. */
  createDirectory: boolean;
  /** SQLITE_CHECKPOINT_PAGES: the WAL's growth that makes the write connection's commit checkpoint. */
  checkpointPages?: number;
  /** Only a store that exists is opened: nothing is created (the commands but serve, migrate and restore). */
  mustExist?: boolean;
  /** Traces, when on (services.ts): the writer's transactions are spans. */
  tracing?: Tracing;
}

/**
 * Makes sure the store file exists, created owner-only (0600): it holds token hashes and, unless
 * WEBHOOK_SECRET_KEY is set, webhook secrets. SQLite gives its -wal and -shm files the mode of
 * the database file. Only the default directory is created: a mistyped path fails here, instead
 * of silently starting an empty store somewhere else. Returns what it created, in the order it
 * did, for a command that must take it away again when it fails (a refused restore).
 */
export function prepareFile(path: string, options: OpenOptions): string[] {
  if (options.mustExist) {
    // An empty file is no store either (a refused start of 0.1 left one behind).
    const size = statSync(path, { throwIfNoEntry: false })?.size;
    if (size === undefined) throw new StoreMissingError(`the file ${resolve(path)} does not exist`);
    if (size === 0) throw new StoreMissingError(`the file ${resolve(path)} is empty`);
    return [];
  }
  const created: string[] = [];
  const dir = dirname(path);
  if (!existsSync(dir)) {
    if (!options.createDirectory) {
      throw new Error(`the store's directory ${dir} does not exist; create it first (only ./data is created for you)`);
    }
    for (let missing = dir; !existsSync(missing); missing = dirname(missing)) created.unshift(missing);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  if (!existsSync(path)) {
    closeSync(openSync(path, constants.O_CREAT | constants.O_RDWR, 0o600));
    created.push(path);
  }
  return created;
}

/**
 * Takes away what prepareFile created, once the store is closed: the file with the -wal and -shm
 * SQLite made beside it, then the directories, each only if nothing else was put in it meanwhile.
 */
export function removeCreated(path: string, created: string[]): void {
  if (!created.includes(path)) return;
  for (const file of [`${path}-wal`, `${path}-shm`, path]) rmSync(file, { force: true });
  for (const dir of created.filter((p) => p !== path).reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
  }
}

/**
 * Opens a connection the way every connection to the store is opened. The writer's commits do
 * not fsync (synchronous = NORMAL); the writer makes the WAL durable itself, for every commit,
 * before it acknowledges a write (see writer.ts). NORMAL still syncs the WAL before a
 * checkpoint and the database after it, so checkpoints never lose what was synced.
 */
function openConnection(path: string, exclusive: boolean): Database.Database {
  const db = new Database(path, { fileMustExist: true });
  try {
    // Exclusive: the WAL index lives in this process's memory instead of the -shm file.
    if (exclusive) db.pragma('locking_mode = EXCLUSIVE');
    // Already WAL after the first start: then this writes nothing (a full disk must not stop a start).
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
    // The first read maps the WAL index: where a full disk shows, when -shm must grow.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // ids are int64: read every integer as bigint so none passes through a float.
    db.defaultSafeIntegers(true);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** The disk is full (or out of room for the -shm file): errors that EXCLUSIVE mode gets around. */
const NO_ROOM = /^SQLITE_(FULL|IOERR_SHMSIZE|IOERR_SHMOPEN|IOERR_SHMMAP|IOERR_WRITE)/;

export interface Connections {
  write: Database.Database;
  /** Its own connection, so a read never sees a transaction under way; the write one when exclusive. */
  read: Database.Database;
  /**
   * The disk was full at open: the -shm file could not grow, so the store is open with EXCLUSIVE
   * locking (no -shm), for this process alone, until it restarts with room on the disk.
   */
  exclusive: boolean;
}

/** Opens the writer's and the readers' connections; on a full disk, one exclusive connection for both. */
export function openConnections(path: string): Connections {
  try {
    // better-sqlite3 13 is a Node-API 10 addon: on an older Node.js (20, or 22 before 22.14) it
    // kills the process with a segmentation fault in new Database() instead of throwing.
    if (!(Number(process.versions.napi) >= 10)) {
      throw new Error(`SQLite needs Node.js 22.14 or later (Node-API 10); this is Node.js ${process.version}`);
    }
    const write = openConnection(path, false);
    try {
      return { write, read: openConnection(path, false), exclusive: false };
    } catch (err) {
      write.close();
      throw err;
    }
  } catch (err) {
    if (!NO_ROOM.test(String((err as { code?: unknown }).code))) throw new StoreUnavailableError(err);
    try {
      const db = openConnection(path, true);
      return { write: db, read: db, exclusive: true };
    } catch (again) {
      throw new StoreUnavailableError(again);
    }
  }
}
