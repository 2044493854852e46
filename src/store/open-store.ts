import type { StoreConfig } from '../config/config.js';
import { SETTINGS } from '../config/settings.js';
import type { Tracing } from '../tracing/tracing.js';
import type { StandbySettings } from './postgres/postgres-store.js';
import type { Store } from './store.js';

export interface OpenStoreOptions {
  /**
   * Open only a store that exists: no file, directory, schema or table is created, and a missing
   * store rejects with StoreMissingError. An existing store's schema is still brought up to date.
   */
  mustExist?: boolean;
  /**
   * Reads go to these standbys too (DATABASE_READ_URL): a serving process's, which looks at their
   * positions for as long as the store is open. Commands read the primary.
   */
  standbys?: StandbySettings;
  /** Traces, when on (a serving process's): the store's write transactions are spans. */
  tracing?: Tracing;
}

/**
 * Opens the store a `DATABASE_URL` names (already validated by the config) and applies pending
 * migrations. Each store's module is loaded only when chosen: the PostgreSQL driver alone costs
 * an embedded start a good part of its time.
 */
export async function openStore(
  // Without sqliteCheckpointPages, SQLite's own default applies (tests that open stores directly).
  config: Omit<StoreConfig, 'sqliteCheckpointPages'> & Partial<StoreConfig>,
  // mustExist: a missing store is StoreMissingError, and nothing is created (see OpenStoreOptions).
  { mustExist = false, standbys, tracing }: OpenStoreOptions = {},
): Promise<{ store: Store; migrated: number }> {
  const { databaseUrl } = config;
  let store: Store;
  if (databaseUrl.startsWith('sqlite:')) {
    const { SqliteStore } = await import('./sqlite/sqlite-store.js');
    // Only the default store's directory is created; any other must exist (a typo fails at once).
    const createDirectory = databaseUrl === SETTINGS.databaseUrl.default;
    store = new SqliteStore(databaseUrl.slice('sqlite:'.length), {
      createDirectory,
      mustExist,
      checkpointPages: config.sqliteCheckpointPages,
      tracing,
    });
  } else if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    store = new PostgresStore(databaseUrl, config.databasePoolSize, { mustExist, standbys, tracing });
  } else {
    throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`);
  }
  try {
    return { store, migrated: await store.migrate() };
  } catch (err) {
    await store.close();
    throw err;
  }
}
