import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

/**
 * A migrated SQLite store in a temporary directory, removed on close. A file, not `:memory:`:
 * the group-commit writer thread opens its own connection, which must see the same database.
 */
export async function tempSqliteStore(): Promise<SqliteStore> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-unit-'));
  const store = new SqliteStore(join(dir, 'store.db'));
  await store.migrate();
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  };
  return store;
}
