/**
 * Versioned schema changes, applied in order; `PRAGMA user_version` records how many ran.
 * Never edit a released entry: append a new one.
 */
export const sqliteMigrations: string[] = [
  `CREATE TABLE plants (
     id   INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     tag  TEXT
   ) STRICT;
   CREATE TABLE tokens (
     id         TEXT PRIMARY KEY,
     name       TEXT NOT NULL,
     hash       TEXT NOT NULL UNIQUE,
     prefix     TEXT NOT NULL,
     scopes     TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER,
     revoked_at INTEGER
   ) STRICT;`,
];
