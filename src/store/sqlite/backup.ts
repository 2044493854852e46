import Database from 'better-sqlite3';
import type { PlantRecord } from '../../domain/plant.js';
import type { TokenRecord } from '../../domain/token.js';
import type { EventType, WebhookEndpoint } from '../../domain/webhook.js';
import type { RestoreTarget, StoreSnapshot } from '../store.js';
import type { PlantTx } from '../write-path.js';
import { plantFromRow, type PlantRow } from './connection.js';
import { tokenFromRow, type TokenRow } from './tokens.js';
import { sqliteFilterUpkeep } from './migrations.js';
import { sqlitePlantTx } from './plant-tx.js';
import { sqliteError } from './writer.js';

interface EndpointRow {
  id: string;
  url: string;
  events: string;
  secret: string;
  enabled: bigint;
  disabled_reason: string | null;
  created_at: bigint;
}

function endpointFromRow(e: EndpointRow): WebhookEndpoint {
  return {
    id: e.id,
    url: e.url,
    events: e.events.split(' ').filter(Boolean) as EventType[],
    secret: e.secret,
    enabled: e.enabled === 1n,
    disabledReason: e.disabled_reason,
    createdAt: new Date(Number(e.created_at)),
  };
}

/** Runs a synchronous read, turning SQLite's outage codes into StoreUnavailableError. */
function guarded<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(sqliteError(err));
  }
}

/**
 * A snapshot on a read-only connection of its own, in one read transaction: WAL keeps showing it
 * the store as of its first read while the server (in this process or another) keeps committing.
 * The first read is made here, so the snapshot's moment is when this returns.
 *
 * `borrowed`: the store's own connection instead, for a store opened for this process alone (a
 * full disk at open: EXCLUSIVE locking), which no other connection can open. The transaction is
 * then the store's: nothing may write through that connection until the snapshot is closed, and
 * closing the snapshot leaves the connection open.
 */
export function sqliteSnapshot(path: string, borrowed?: Database.Database): Promise<StoreSnapshot> {
  return guarded(() => {
    const db = borrowed ?? new Database(path, { readonly: true, fileMustExist: true });
    try {
      db.defaultSafeIntegers(true);
      // A reader waits only while another connection recovers the WAL after a crash.
      if (!borrowed) db.pragma('busy_timeout = 5000');
      // BEGIN is deferred: the first read starts the read transaction and pins its snapshot.
      db.exec('BEGIN');
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      const schemaVersion = Number(db.pragma('user_version', { simple: true }));
      const s = {
        tokens: db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id'),
        endpoints: db.prepare<[], EndpointRow>(
          `SELECT id, url, events, secret, enabled, disabled_reason, created_at
           FROM webhook_endpoints ORDER BY created_at, id`,
        ),
        first: db.prepare<[number], PlantRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?'),
        after: db.prepare<[bigint, number], PlantRow>(
          'SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?',
        ),
      };
      return {
        schemaVersion,
        tokens: () => guarded(() => s.tokens.all().map(tokenFromRow)),
        endpoints: () => guarded(() => s.endpoints.all().map(endpointFromRow)),
        plants: (after, limit) =>
          guarded(() => (after === undefined ? s.first.all(limit) : s.after.all(after, limit)).map(plantFromRow)),
        close: () =>
          guarded(() => {
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
 * savepoint). A restore fills an empty store, so the list's filters are built once its plants are
 * all in rather than kept up row by row, which took more than half of its time: the tag index is
 * dropped first, plants go in without their words, and once `work` has succeeded the index is
 * created again as the migration made it and plants_fts filled from the plants and merged into
 * one segment, before the commit. SQLite's DDL is transactional: other connections see the store
 * as it was until the commit, and a restore that fails rolls back to its savepoint, index
 * included. Nothing else writes meanwhile: the writer runs its jobs one after the other, and holds
 * the file's write lock.
 */
export async function sqliteRestore<T>(
  db: Database.Database,
  insertToken: (t: TokenRecord) => void,
  work: (target: RestoreTarget) => Promise<T>,
): Promise<T> {
  db.exec(sqliteFilterUpkeep.drop);
  const plants = sqlitePlantTx(db, noEvents, { searchIndex: false });
  const result = await work(sqliteRestoreTarget(db, plants, insertToken));
  db.exec(sqliteFilterUpkeep.tagIndex);
  db.exec(sqliteFilterUpkeep.ftsEmpty);
  db.exec(sqliteFilterUpkeep.ftsFill);
  db.exec(sqliteFilterUpkeep.ftsOptimize);
  return result;
}

const noEvents = (): never => {
  throw new Error('a restore writes no outbox events');
};

/**
 * A restore's writes, on the write connection inside the writer's transaction. Plants go in
 * through the write path's own insert statement; no outbox event is written.
 */
function sqliteRestoreTarget(
  db: Database.Database,
  plants: PlantTx,
  insertToken: (t: TokenRecord) => void,
): RestoreTarget {
  const s = {
    count: db.prepare<[], { plants: bigint; tokens: bigint; endpoints: bigint }>(
      `SELECT (SELECT count(*) FROM plants) AS plants, (SELECT count(*) FROM tokens) AS tokens,
              (SELECT count(*) FROM webhook_endpoints) AS endpoints`,
    ),
    insertEndpoint: db.prepare(
      `INSERT INTO webhook_endpoints (id, url, events, secret, enabled, disabled_reason, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
  return {
    async counts() {
      const c = s.count.get()!;
      return { plants: Number(c.plants), tokens: Number(c.tokens), endpoints: Number(c.endpoints) };
    },
    async insertTokens(tokens) {
      for (const t of tokens) insertToken(t);
    },
    async insertEndpoints(endpoints) {
      for (const e of endpoints) {
        const enabled = e.enabled ? 1 : 0;
        s.insertEndpoint.run(
          e.id,
          e.url,
          e.events.join(' '),
          e.secret,
          enabled,
          e.disabledReason,
          e.createdAt.getTime(),
        );
      }
    },
    async insertPlants(list: PlantRecord[]) {
      return (await plants.insert(list)).size;
    },
  };
}
