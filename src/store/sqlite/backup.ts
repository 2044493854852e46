import Database from 'better-sqlite3';
import {
  restoreParts,
  snapshotParts,
  type BackupParts,
  type RestoreTarget,
  type SnapshotPart,
  type StoreSnapshot,
} from '../backup.js';
import { sqliteError, sqliteRead } from './writer.js';
import { CURRENT_POSITION } from './changes.js';
import { sqliteNewChangeLog } from './migrations.js';

/** A part's pages with SQLite's outage codes turned into StoreUnavailableError. */
function guarded<R>(part: SnapshotPart<R>): SnapshotPart<R> {
  return {
    async *pages() {
      try {
        yield* part.pages();
      } catch (err) {
        throw sqliteError(err);
      }
    },
  };
}

/**
 * A snapshot on a read-only connection of its own, in one read transaction: WAL keeps showing it
 * the store as of its first read while the server (in this process or another) keeps committing.
 * The first read is made here, so the snapshot's moment is when this returns. Each kind of
 * record is read through its part.
 *
 * `borrowed`: the store's own connection instead, for a store opened for this process alone (a
 * full disk at open: EXCLUSIVE locking), which no other connection can open. The transaction is
 * then the store's: nothing may write through that connection until the snapshot is closed, and
 * closing the snapshot leaves the connection open.
 */
export function sqliteSnapshot(
  path: string,
  parts: BackupParts<Database.Database>,
  borrowed?: Database.Database,
): Promise<StoreSnapshot> {
  return sqliteRead(() => {
    const db = borrowed ?? new Database(path, { readonly: true, fileMustExist: true });
    try {
      db.defaultSafeIntegers(true);
      // A reader waits only while another connection recovers the WAL after a crash.
      if (!borrowed) db.pragma('busy_timeout = 5000');
      // BEGIN is deferred: the first read starts the read transaction and pins its snapshot.
      db.exec('BEGIN');
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      const schemaVersion = Number(db.pragma('user_version', { simple: true }));
      return {
        schemaVersion,
        records: snapshotParts(parts, db, guarded),
        position: () =>
          sqliteRead(() => db.prepare<[], bigint>(`SELECT (${CURRENT_POSITION})`).pluck().get() as bigint),
        close: () =>
          sqliteRead(() => {
            if (!db.open) return;
            if (db.inTransaction) db.exec('COMMIT');
            if (!borrowed) db.close();
          }),
      };
    } catch (err) {
      if (!borrowed) db.close();
      else if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
  });
}

/**
 * Runs a restore's `work` on the write connection, inside the writer's transaction (its job's
 * savepoint), each kind of record written through its part; once `work` has succeeded, each part
 * finishes what its kind keeps beside its records (`done`: the plants' search indexes), before the
 * commit. Nothing else writes meanwhile: the writer runs its jobs one after the other, and holds
 * the file's write lock.
 */
export async function sqliteRestore<T>(
  db: Database.Database,
  parts: BackupParts<Database.Database>,
  work: (target: RestoreTarget) => Promise<T>,
): Promise<T> {
  const records = restoreParts(parts, db);
  const result = await work({ records });
  for (const part of Object.values(records)) await part.done?.();
  // A backup carries no change log: the restored store starts a new one, past every position
  // of the store it came from, so a reader of that one is told to list again (410).
  db.exec(sqliteNewChangeLog);
  return result;
}
