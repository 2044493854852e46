import { after, before } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore, type StoreKind, type TestStore } from './stores.js';

/**
 * A fresh store of this kind, opened (migrated) before the suite's tests and dropped after them;
 * read `db` and `store` in the tests, once `before` has run.
 */
export function suiteStore(kind: StoreKind, poolSize = 1): { db: TestStore; store: Store } {
  const s = {} as { db: TestStore; store: Store };
  before(async () => {
    s.db = createTestStore(kind);
    s.store = (await openStore({ databaseUrl: s.db.databaseUrl, databasePoolSize: poolSize })).store;
  });
  after(async () => {
    await s.store?.close();
    await s.db?.drop();
  });
  return s;
}
