import { postgresMigrations } from './postgres/migrations.js';
import { sqliteMigrations } from './sqlite/migrations.js';

export const STORE_KINDS = ['sqlite', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/**
 * The schema version each kind of store is at once this plant-store has migrated it: how many
 * migrations it knows. A backup records its store's; a newer one is refused on restore. (The
 * migration lists only import their drivers' types, so this loads neither driver.)
 */
export const KNOWN_SCHEMA_VERSIONS: Readonly<Record<StoreKind, number>> = {
  sqlite: sqliteMigrations.length,
  postgres: postgresMigrations.length,
};
