import type Database from 'better-sqlite3';
import type { PlantRecord } from '../../domain/plant.js';
import type { PlantWrite, Written } from '../../domain/plant-write.js';
import { SNAPSHOT_PAGE, type RecordsInBackup } from '../backup.js';
import type { PlantStore } from '../plants.js';
import type { Acknowledged } from '../acknowledged.js';
import { applyWrites } from '../write-path.js';
import { plantFromRow, type PlantRow } from './rows.js';
import { sqliteLog } from './changes.js';
import { sqliteFilterUpkeep } from './migrations.js';
import { sqliteFilters } from './plant-filters.js';
import { sqlitePlantTx } from './plant-tx.js';
import { sqliteRead, type JobKind, type SqliteAccess } from './writer.js';

/**
 * The plants of the SQLite store: reads on the read connection; writes through the writer, whose
 * transaction the write path runs in (plant-tx.ts), with the outbox's rows (outbox.ts).
 */
export function sqlitePlants({ read, write, writer }: SqliteAccess, acknowledged: Acknowledged): PlantStore {
  const s = {
    get: read.prepare<[bigint], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?'),
    listFirst: read.prepare<[number], PlantRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?'),
    listAfter: read.prepare<[bigint, number], PlantRow>(
      'SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?',
    ),
    count: read.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM plants'),
    totalChanges: write.prepare<[], number>('SELECT total_changes()').pluck(),
    mergeSearchIndex: write.prepare(sqliteFilterUpkeep.ftsMergeStep),
  };
  const filters = sqliteFilters(read);
  const tx = sqlitePlantTx(write, sqliteLog(write));
  /** Plant writes queued together are applied together (one read and one insert each, no savepoint each). */
  const writes: JobKind<PlantWrite, Written> = { many: (batch) => applyWrites(batch, tx), small: true };
  /** One step of merging the search index; false when it found nothing left to merge. */
  const mergeStep = (): boolean => {
    const before = s.totalChanges.get()!;
    s.mergeSearchIndex.run();
    return s.totalChanges.get()! - before > 1;
  };

  return {
    // Each resolves once durable, and the feed hears of it then (acknowledged.ts).
    write: (w) => writer.add(writes, w).then((done) => acknowledged.told(done)),
    writeAll: (all) => writer.run(() => applyWrites(all, tx)).then((done) => acknowledged.told(done)),
    // A job of the writer's transaction like any other, in a savepoint of its own: a refused
    // batch rolls back to it alone, and the writes queued beside it share its commit.
    writeBatch: (all) =>
      writer.run(() => applyWrites(all, tx, { allOrNothing: true })).then((done) => acknowledged.told(done)),
    /**
     * Merges the search index a step at a time, each step a transaction of its own: a server
     * writing to the same file meanwhile waits for one step (at most 140 ms on 1,000,000 plants),
     * never for the whole merge (0.6 s there, and about ten times that on ten times as many).
     */
    async settleAfterImport() {
      for (let merged = true; merged;) merged = await writer.run(mergeStep);
    },
    get: (id) =>
      sqliteRead(() => {
        const row = s.get.get(id);
        return row && plantFromRow(row);
      }),
    list: (query, limit) =>
      sqliteRead(() => {
        const { after } = query;
        return (
          filters.listPlants(query, limit) ??
          (after === undefined ? s.listFirst.all(limit) : s.listAfter.all(after, limit)).map(plantFromRow)
        );
      }),
    count: () => sqliteRead(() => Number(s.count.get()!.n)),
  };
}

const noEvents = (): never => {
  throw new Error('a restore writes nothing to the change log');
};

/**
 * Plants in a backup: read a page at a time by id; restored through the write path's own insert.
 * A restore fills an empty store, so the list's filters are built once its plants are all in
 * rather than kept up row by row, which took more than half of its time: the tag index is dropped
 * first, plants go in without their words, and once every record is in (`done`) the index is
 * created again as the migration made it and plants_fts filled from the plants and merged into
 * one segment, before the commit. SQLite's DDL is transactional: other connections see the store
 * as it was until the commit, and a restore that fails rolls back, index included.
 */
export const plantsInBackup: RecordsInBackup<PlantRecord, Database.Database> = {
  tables: ['plants', 'plants_fts'],
  snapshot(db) {
    const first = db.prepare<[number], PlantRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?');
    const after = db.prepare<[bigint, number], PlantRow>(
      'SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?',
    );
    return {
      async *pages() {
        for (let last: bigint | undefined, more = true; more;) {
          const page = (last === undefined ? first.all(SNAPSHOT_PAGE) : after.all(last, SNAPSHOT_PAGE)).map(
            plantFromRow,
          );
          if (page.length > 0) yield page;
          more = page.length === SNAPSHOT_PAGE;
          last = page.at(-1)?.id;
        }
      },
    };
  },
  restore(db) {
    db.exec(sqliteFilterUpkeep.drop);
    const tx = sqlitePlantTx(db, noEvents, { searchIndex: false });
    const count = db.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM plants');
    return {
      count: async () => Number(count.get()!.n),
      insert: async (plants) => (await tx.insert(plants)).size,
      async done() {
        db.exec(sqliteFilterUpkeep.tagIndex);
        db.exec(sqliteFilterUpkeep.ftsEmpty);
        db.exec(sqliteFilterUpkeep.ftsFill);
        db.exec(sqliteFilterUpkeep.ftsOptimize);
      },
    };
  },
};
