import type { Store } from './store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

/** Opens the store a `DATABASE_URL` names (already validated by the config) and applies pending migrations. */
export async function openStore(databaseUrl: string): Promise<{ store: Store; migrated: number }> {
  if (!databaseUrl.startsWith('sqlite:')) {
    throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`);
  }
  const store = new SqliteStore(databaseUrl.slice('sqlite:'.length));
  try {
    return { store, migrated: await store.migrate() };
  } catch (err) {
    await store.close();
    throw err;
  }
}
