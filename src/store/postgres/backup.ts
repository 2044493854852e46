import type { PoolClient, QueryConfig, QueryResultRow } from 'pg';
import {
  restoreParts,
  snapshotParts,
  type BackupParts,
  type RestoreTarget,
  type SnapshotPart,
  type StoreSnapshot,
} from '../backup.js';
import { storeError } from './errors.js';
import { CURRENT_POSITION } from './changes.js';
import { POSTGRES_NEW_CHANGE_LOG } from './migrations.js';
import type { BeginOptions } from './pool.js';
import type { Run } from './rows.js';

/**
 * A restore's statements get this long (a lock held by a busy instance, a large batch); the
 * pool's 4 s is for requests.
 */
const RESTORE_STATEMENT_TIMEOUT_MS = 10 * 60_000;

/** Runs statements on one client; pg takes a per-query query_timeout that @types/pg does not declare. */
function runOnClient(client: PoolClient, queryTimeoutMs?: number): Run {
  return async <R extends QueryResultRow>(query: QueryConfig) => {
    try {
      const config =
        queryTimeoutMs === undefined ? query : ({ ...query, query_timeout: queryTimeoutMs } as QueryConfig);
      return (await client.query<R>(config)).rows;
    } catch (err) {
      throw storeError(err);
    }
  };
}

/**
 * A snapshot in one REPEATABLE READ, READ ONLY transaction on a connection of its own: every
 * statement of it sees the database as of its first, whatever other instances commit meanwhile.
 * Each kind of record is read through its part. `release` gives the connection back (`true`: it
 * broke).
 */
export async function postgresSnapshot(
  client: PoolClient,
  begin: (options: BeginOptions) => string,
  parts: BackupParts<Run>,
  release: (broken: boolean) => void,
): Promise<StoreSnapshot> {
  const run = runOnClient(client);
  let open = true;
  const end = async (broken: boolean) => {
    if (!open) return;
    open = false;
    release(broken);
  };
  /** A part whose failure lets the connection go, as broken. */
  const step = <R>(part: SnapshotPart<R>): SnapshotPart<R> => ({
    async *pages() {
      try {
        yield* part.pages();
      } catch (err) {
        await end(true);
        throw err;
      }
    },
  });
  try {
    // The reader of the backup may pause (a slow pipe): the transaction may sit idle that long.
    // A vanished process's connection is closed, and its transaction ended, by the server.
    await run({ text: begin({ begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', idleMs: 0 }) });
    // The first query takes the snapshot.
    const [version] = await run<{ version: number }>({
      text: 'SELECT coalesce(max(version), 0) AS version FROM schema_migrations',
    });
    return {
      schemaVersion: Number(version?.version ?? 0),
      records: snapshotParts(parts, run, step),
      position: async () => {
        const [row] = await run<{ p: string }>({ text: `SELECT (${CURRENT_POSITION})::text AS p` });
        return BigInt(row!.p);
      },
      close: async () => {
        if (!open) return;
        try {
          await run({ text: 'COMMIT' });
          await end(false);
        } catch (err) {
          await end(true);
          throw err;
        }
      },
    };
  } catch (err) {
    await end(true);
    throw err;
  }
}

/**
 * Runs a restore in one transaction on `client`, each kind of record written through its part.
 * Every table the parts cover is locked against writes (SHARE ROW EXCLUSIVE: reads go on, other
 * instances' writes wait) so that the store stays as the parts' counts found it until the commit.
 */
export async function postgresRestore<T>(
  client: PoolClient,
  begin: (options: BeginOptions) => string,
  parts: BackupParts<Run>,
  work: (target: RestoreTarget) => Promise<T>,
): Promise<T> {
  const run = runOnClient(client, RESTORE_STATEMENT_TIMEOUT_MS + 5_000);
  // The backup is read while the transaction is open, from a pipe that may pause.
  await run({ text: begin({ statementTimeoutMs: RESTORE_STATEMENT_TIMEOUT_MS, idleMs: 0 }) });
  try {
    const tables = Object.values(parts).flatMap((part) => part.tables);
    await run({ text: `LOCK TABLE ${tables.join(', ')} IN SHARE ROW EXCLUSIVE MODE` });
    const records = restoreParts(parts, run);
    const result = await work({ records });
    for (const part of Object.values(records)) await part.done?.();
    // A backup carries no change log: the restored store starts a new one, past every position
    // of the store it came from, so a reader of that one is told to list again (410).
    await run({ text: POSTGRES_NEW_CHANGE_LOG });
    await run({ text: 'COMMIT' });
    return result;
  } catch (err) {
    await run({ text: 'ROLLBACK' }).catch(() => undefined);
    throw err;
  }
}
