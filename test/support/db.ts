import Database from 'better-sqlite3';

export interface StoredPlant {
  id: bigint;
  name: string;
  tag: string | null;
}

/** Reads the plants straight from a SQLite store file, ids as exact bigints. */
export function readStoredPlants(databaseUrl: string): StoredPlant[] {
  const db = new Database(databaseUrl.replace(/^sqlite:/, ''), { readonly: true });
  try {
    db.defaultSafeIntegers(true);
    return db.prepare('SELECT id, name, tag FROM plants ORDER BY id').all() as StoredPlant[];
  } finally {
    db.close();
  }
}
