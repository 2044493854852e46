import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { PlantRecord } from '../../domain/plant.js';
import type { Scope, TokenRecord } from '../../domain/token.js';

/** Opens the store file the way every connection to it must be opened. */
export function openConnection(path: string): Database.Database {
  let db: Database.Database;
  try {
    // better-sqlite3 13 is a Node-API 10 addon: on an older Node.js (20, or 22 before 22.14) it
    // kills the process with a segmentation fault in new Database() instead of throwing.
    if (!(Number(process.versions.napi) >= 10)) {
      throw new Error(`SQLite needs Node.js 22.14 or later (Node-API 10); this is Node.js ${process.version}`);
    }
    mkdirSync(dirname(path), { recursive: true });
    db = new Database(path);
  } catch (err) {
    throw new StoreUnavailableError(err);
  }
  db.pragma('journal_mode = WAL');
  // FULL makes every commit fsync the WAL, so an acknowledged write survives power loss.
  db.pragma('synchronous = FULL');
  // The CLI writes to the same file while the server runs.
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  // ids are int64: read every integer as bigint so none passes through a float.
  db.defaultSafeIntegers(true);
  return db;
}

export interface PlantRow {
  id: bigint;
  name: string;
  tag: string | null;
}

export interface TokenRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string;
  created_at: bigint;
  expires_at: bigint | null;
  revoked_at: bigint | null;
}

export const PLANT_BY_ID = 'SELECT id, name, tag FROM plants WHERE id = ?';

export function plantFromRow(row: PlantRow): PlantRecord {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}

export function tokenFromRow(row: TokenRow): TokenRecord {
  const date = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)));
  return {
    id: row.id,
    name: row.name,
    hash: row.hash,
    prefix: row.prefix,
    scopes: row.scopes.split(' ').filter(Boolean) as Scope[],
    createdAt: new Date(Number(row.created_at)),
    expiresAt: date(row.expires_at),
    revokedAt: date(row.revoked_at),
  };
}
