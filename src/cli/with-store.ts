import { loadStoreConfig } from '../config.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';

/** Commands read the same DATABASE_URL as the server and bring the schema up to date first. */
export async function withStore<T>(work: (store: Store, migrated: number) => Promise<T>): Promise<T> {
  const { store, migrated } = await openStore(loadStoreConfig(process.env));
  try {
    return await work(store, migrated);
  } finally {
    await store.close();
  }
}
