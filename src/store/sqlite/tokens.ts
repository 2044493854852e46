import type Database from 'better-sqlite3';
import type { Scope, TokenRecord } from '../../domain/token.js';
import type { RecordsInBackup } from '../backup.js';
import type { TokenStore } from '../tokens.js';
import { sqliteRead, type SqliteAccess } from './writer.js';

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

const LIST = 'SELECT * FROM tokens ORDER BY created_at, id';
const COUNT = 'SELECT count(*) AS n FROM tokens';

/** Inserts tokens on `db`: scopes one string, times in ms since the epoch. */
function tokenInsert(db: Database.Database): (t: TokenRecord) => void {
  const insert = db.prepare(
    'INSERT INTO tokens (id, name, hash, prefix, scopes, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const ms = (d: Date | null) => d?.getTime() ?? null;
  return (t) =>
    void insert.run(
      t.id,
      t.name,
      t.hash,
      t.prefix,
      t.scopes.join(' '),
      t.createdAt.getTime(),
      ms(t.expiresAt),
      ms(t.revokedAt),
    );
}

/** The tokens of the SQLite store. */
export function sqliteTokens({ read, write, writer }: SqliteAccess): TokenStore {
  const s = {
    byHash: read.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE hash = ?'),
    list: read.prepare<[], TokenRow>(LIST),
    count: read.prepare<[], { n: bigint }>(COUNT),
    revoke: write.prepare('UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?'),
  };
  const insert = tokenInsert(write);
  return {
    insert: (token) => writer.run(() => insert(token)),
    findByHash: (hash) =>
      sqliteRead(() => {
        const row = s.byHash.get(hash);
        return row && tokenFromRow(row);
      }),
    list: () => sqliteRead(() => s.list.all().map(tokenFromRow)),
    count: () => sqliteRead(() => Number(s.count.get()!.n)),
    revoke: (id, at) => writer.run(() => s.revoke.run(at.getTime(), id).changes === 1),
  };
}

/** Tokens in a backup: read on a snapshot's connection, written on a restore's. */
export const tokensInBackup: RecordsInBackup<TokenRecord, Database.Database> = {
  tables: ['tokens'],
  snapshot(db) {
    const list = db.prepare<[], TokenRow>(LIST);
    return {
      async *pages() {
        yield list.all().map(tokenFromRow);
      },
    };
  },
  restore(db) {
    const insert = tokenInsert(db);
    const count = db.prepare<[], { n: bigint }>(COUNT);
    return {
      count: async () => Number(count.get()!.n),
      async insert(tokens) {
        for (const t of tokens) insert(t);
        return tokens.length;
      },
    };
  },
};
