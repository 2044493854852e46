import type { PlantRecord } from '../domain/plant.js';
import type { PlantListQuery } from '../domain/plant-query.js';
import type { PlantWrite, Written } from '../domain/plant-write.js';

/**
 * The plants, and the one write path that changes them (write-path.ts): each write is decided by
 * the domain's rules inside the store's transaction, atomically with its change in the change log.
 */
export interface PlantStore {
  /**
   * Creates, replaces, patches or deletes one plant. Writes that arrive together may share a
   * transaction and its commit; one that fails fails alone.
   */
  write(write: PlantWrite): Promise<Written>;
  /**
   * Many writes in one transaction, in order (import): a refused write (a conflict) answers its
   * refusal and the others go ahead; a failure of the store fails them all.
   */
  writeAll(writes: PlantWrite[]): Promise<Written[]>;
  /**
   * Many writes in one transaction and one durable commit, in order, all or nothing (a batch):
   * when one is refused it rejects with WritesRefused and none is applied, nor logged.
   */
  writeBatch(writes: PlantWrite[]): Promise<Written[]>;
  /**
   * After an import's batches: lays out what the list's filters read as a bulk load leaves it
   * badly. SQLite merges its search index, which the load left in one segment per few batches,
   * into one (a search seeks in each); PostgreSQL refreshes the planner's statistics of the
   * tables the load filled, rather than wait for autovacuum to notice.
   */
  settleAfterImport(): Promise<void>;
  get(id: bigint): Promise<PlantRecord | undefined>;
  /**
   * Up to `limit` plants that pass the query's filters with an id greater than its `after`, by id
   * ascending; O(limit) whatever the store holds.
   */
  list(query: PlantListQuery, limit: number): Promise<PlantRecord[]>;
  /** How many plants the store holds (for metrics; may take a few ms on millions). */
  count(): Promise<number>;
}
