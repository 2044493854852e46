import type Database from 'better-sqlite3';
import { TICKET_KEPT_MS } from '../../domain/ticket.js';
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

interface TicketRow {
  hash: string;
  token_hash: string | null;
  subject: string | null;
  scopes: string;
  expires_at: bigint;
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
    insertTicket: write.prepare(
      'INSERT INTO stream_tickets (hash, token_hash, subject, scopes, expires_at) VALUES (?, ?, ?, ?, ?)',
    ),
    forgetTickets: write.prepare('DELETE FROM stream_tickets WHERE expires_at < ?'),
    ticket: read.prepare<[string], TicketRow>('SELECT * FROM stream_tickets WHERE hash = ?'),
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
    insertTicket: (t) =>
      writer.run(() => {
        s.forgetTickets.run(Date.now() - TICKET_KEPT_MS);
        s.insertTicket.run(t.hash, t.tokenHash, t.subject, t.scopes.join(' '), t.expiresAt.getTime());
      }),
    findTicket: (hash) =>
      sqliteRead(() => {
        const row = s.ticket.get(hash);
        return (
          row && {
            hash: row.hash,
            tokenHash: row.token_hash,
            subject: row.subject,
            scopes: row.scopes.split(' ').filter(Boolean) as Scope[],
            expiresAt: new Date(Number(row.expires_at)),
          }
        );
      }),
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
