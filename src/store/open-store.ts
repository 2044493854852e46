import type { StoreConfig } from '../config.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** Opens the store a `DATABASE_URL` names (already validated by the config) and applies pending migrations. */
export async function openStore(config: StoreConfig): Promise<{ store: Store; migrated: number }> {
  const { databaseUrl } = config;
  let store: Store;
  if (databaseUrl.startsWith('sqlite:')) store = new SqliteStore(databaseUrl.slice('sqlite:'.length));
  else if (/^postgres(ql)?:\/\//.test(databaseUrl)) store = new PostgresStore(databaseUrl, config.poolSize);
  else throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`);
  try {
    return { store, migrated: await store.migrate() };
  } catch (err) {
    await store.close();
    throw err;
  }
}
