import type Database from 'better-sqlite3';
import type { PlantTx } from '../write-path.js';
import { sqliteFilterUpkeep } from './migrations.js';
import { sqlitePlantTx } from './plant-tx.js';
import { sqliteEmit } from './outbox.js';

/** The store's writes, on the write connection; the writer runs each inside its transaction. */
export function sqliteWrites(db: Database.Database) {
  const s = {
    totalChanges: db.prepare<[], number>('SELECT total_changes()').pluck(),
    mergeSearchIndex: db.prepare(sqliteFilterUpkeep.ftsMergeStep),
  };
  const plants: PlantTx = sqlitePlantTx(db, sqliteEmit(db));
  return {
    plants,
    /** One step of merging the search index; false when it found nothing left to merge. */
    mergeSearchIndexStep(): boolean {
      const before = s.totalChanges.get()!;
      s.mergeSearchIndex.run();
      return s.totalChanges.get()! - before > 1;
    },
  };
}
