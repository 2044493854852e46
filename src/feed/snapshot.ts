import type { Store } from '../store/store.js';
import type { PlantsAsOf } from './read.js';

/**
 * The plants at one position of the log, for a stream's `snapshot=true`: one read transaction of
 * the store's own (SQLite: a connection of its own whose WAL snapshot stays put; PostgreSQL: a
 * repeatable-read transaction on the primary), the position read inside it, so the plants are
 * exactly those the log's changes up to that position made.
 */
export async function plantsAsOf(store: Pick<Store, 'openSnapshot'>): Promise<PlantsAsOf> {
  const snapshot = await store.openSnapshot();
  try {
    const position = await snapshot.position();
    return { position, pages: () => snapshot.records.plants.pages(), close: () => snapshot.close() };
  } catch (err) {
    await snapshot.close();
    throw err;
  }
}
