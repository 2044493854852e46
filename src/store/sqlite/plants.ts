import type { PlantWrite, WriteOutcome } from '../../domain/plant-write.js';
import type { PlantStore } from '../plants.js';
import { applyWrites } from '../write-path.js';
import { plantFromRow, type PlantRow } from './connection.js';
import { sqliteFilterUpkeep } from './migrations.js';
import { sqliteEmit } from './outbox.js';
import { sqliteFilters } from './plant-filters.js';
import { sqlitePlantTx } from './plant-tx.js';
import { sqliteRead, type JobKind, type SqliteAccess } from './writer.js';

/**
 * The plants of the SQLite store: reads on the read connection; writes through the writer, whose
 * transaction the write path runs in (plant-tx.ts), with the outbox's rows (outbox.ts).
 */
export function sqlitePlants({ read, write, writer }: SqliteAccess): PlantStore {
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
  const tx = sqlitePlantTx(write, sqliteEmit(write));
  /** Plant writes queued together are applied together (one read and one insert each, no savepoint each). */
  const writes: JobKind<PlantWrite, WriteOutcome> = { many: (batch) => applyWrites(batch, tx), small: true };
  /** One step of merging the search index; false when it found nothing left to merge. */
  const mergeStep = (): boolean => {
    const before = s.totalChanges.get()!;
    s.mergeSearchIndex.run();
    return s.totalChanges.get()! - before > 1;
  };

  return {
    write: (w) => writer.add(writes, w),
    writeAll: (all) => writer.run(() => applyWrites(all, tx)),
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
