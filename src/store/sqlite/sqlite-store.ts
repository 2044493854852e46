import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  StoreUnavailableError,
  type CreateOutcome,
  type PlantRecord,
  type Scope,
  type Store,
  type TokenRecord,
} from '../store.js';
import { sqliteMigrations } from './migrations.js';

interface PlantRow {
  id: bigint;
  name: string;
  tag: string | null;
}

interface TokenRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string;
  created_at: bigint;
  expires_at: bigint | null;
  revoked_at: bigint | null;
}

/** The embedded store: one SQLite file in WAL mode, every commit fsync'd before it resolves. */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private prepared: ReturnType<SqliteStore['prepare']> | undefined;

  constructor(readonly path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    try {
      this.db = new Database(path);
    } catch (err) {
      throw new StoreUnavailableError(err);
    }
    this.db.pragma('journal_mode = WAL');
    // FULL makes every commit fsync the WAL, so an acknowledged write survives power loss.
    this.db.pragma('synchronous = FULL');
    // The CLI writes to the same file while the server runs.
    this.db.pragma('busy_timeout = 5000');
    // ids are int64: read every integer as bigint so none passes through a float.
    this.db.defaultSafeIntegers(true);
  }

  /** Statements need the tables, so they are prepared once the schema is current. */
  private get stmt() {
    this.prepared ??= this.prepare();
    return this.prepared;
  }

  private prepare() {
    return {
      insertPlant: this.db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      getPlant: this.db.prepare<[bigint], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?'),
      listFirst: this.db.prepare<[number], PlantRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?'),
      listAfter: this.db.prepare<[bigint, number], PlantRow>(
        'SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?',
      ),
      replacePlant: this.db.prepare('UPDATE plants SET name = ?, tag = ? WHERE id = ?'),
      deletePlant: this.db.prepare<[bigint], PlantRow>('DELETE FROM plants WHERE id = ? RETURNING id, name, tag'),
      insertToken: this.db.prepare(
        'INSERT INTO tokens (id, name, hash, prefix, scopes, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      tokenByHash: this.db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE hash = ?'),
      listTokens: this.db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id'),
      countTokens: this.db.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM tokens'),
      revokeToken: this.db.prepare('UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?'),
    };
  }

  async migrate(): Promise<number> {
    // IMMEDIATE takes the write lock first, so two processes starting together migrate once.
    return this.db
      .transaction(() => {
        const version = Number(this.db.pragma('user_version', { simple: true }));
        for (const sql of sqliteMigrations.slice(version)) this.db.exec(sql);
        this.db.pragma(`user_version = ${sqliteMigrations.length}`);
        return Math.max(0, sqliteMigrations.length - version);
      })
      .immediate();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async createPlant(plant: PlantRecord): Promise<CreateOutcome> {
    return this.db.transaction(() => this.insertOne(plant)).immediate();
  }

  async createPlants(plants: PlantRecord[]): Promise<CreateOutcome[]> {
    return this.db.transaction(() => plants.map((p) => this.insertOne(p))).immediate();
  }

  private insertOne(plant: PlantRecord): CreateOutcome {
    const { changes } = this.stmt.insertPlant.run(plant.id, plant.name, plant.tag ?? null);
    if (changes === 1) return { kind: 'created' };
    const existing = plantFromRow(this.stmt.getPlant.get(plant.id)!);
    return existing.name === plant.name && existing.tag === plant.tag
      ? { kind: 'identical' }
      : { kind: 'conflict', existing };
  }

  async getPlant(id: bigint): Promise<PlantRecord | undefined> {
    const row = this.stmt.getPlant.get(id);
    return row && plantFromRow(row);
  }

  async listPlants(after: bigint | undefined, limit: number): Promise<PlantRecord[]> {
    const rows = after === undefined ? this.stmt.listFirst.all(limit) : this.stmt.listAfter.all(after, limit);
    return rows.map(plantFromRow);
  }

  async replacePlant(plant: PlantRecord): Promise<boolean> {
    return this.stmt.replacePlant.run(plant.name, plant.tag ?? null, plant.id).changes === 1;
  }

  async deletePlant(id: bigint): Promise<PlantRecord | undefined> {
    const row = this.stmt.deletePlant.get(id);
    return row && plantFromRow(row);
  }

  async insertToken(t: TokenRecord): Promise<void> {
    this.stmt.insertToken.run(
      t.id,
      t.name,
      t.hash,
      t.prefix,
      t.scopes.join(' '),
      t.createdAt.getTime(),
      t.expiresAt?.getTime() ?? null,
      t.revokedAt?.getTime() ?? null,
    );
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | undefined> {
    const row = this.stmt.tokenByHash.get(hash);
    return row && tokenFromRow(row);
  }

  async listTokens(): Promise<TokenRecord[]> {
    return this.stmt.listTokens.all().map(tokenFromRow);
  }

  async countTokens(): Promise<number> {
    return Number(this.stmt.countTokens.get()?.n ?? 0);
  }

  async revokeToken(id: string, at: Date): Promise<boolean> {
    return this.stmt.revokeToken.run(at.getTime(), id).changes === 1;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function plantFromRow(row: PlantRow): PlantRecord {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}

function tokenFromRow(row: TokenRow): TokenRecord {
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
