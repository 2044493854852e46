import { TICKET_KEPT_MS } from '../../domain/ticket.js';
import type { Scope, TokenRecord } from '../../domain/token.js';
import type { RecordsInBackup } from '../backup.js';
import type { TokenStore } from '../tokens.js';
import type { Run } from './rows.js';

interface TokenRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

function tokenFromRow(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    hash: row.hash,
    prefix: row.prefix,
    scopes: row.scopes as Scope[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

const SQL = {
  byHash: { text: 'SELECT * FROM tokens WHERE hash = $1' },
  list: { text: 'SELECT * FROM tokens ORDER BY created_at, id' },
  count: { text: 'SELECT count(*) AS n FROM tokens' },
  insert: {
    text: `INSERT INTO tokens (id, name, hash, prefix, scopes, created_at, expires_at, revoked_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  },
  revoke: { text: 'UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 RETURNING id' },
  // One statement: the ticket kept, and those a day past their expiry forgotten.
  insertTicket: {
    text: `WITH gone AS (DELETE FROM stream_tickets WHERE expires_at < $6)
           INSERT INTO stream_tickets (hash, token_hash, subject, scopes, expires_at) VALUES ($1, $2, $3, $4, $5)`,
  },
  ticket: { text: 'SELECT * FROM stream_tickets WHERE hash = $1' },
} as const;

interface TicketRow {
  hash: string;
  token_hash: string | null;
  subject: string | null;
  scopes: string[];
  expires_at: Date;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

/**
 * The tokens of the PostgreSQL store: each operation one statement on a pooled connection; a
 * request's look-up by hash through `lookUp`, with its own short budget (TOKEN_LOOKUP_BUDGET_MS).
 */
export function postgresTokens(run: Run, lookUp: Run = run): TokenStore {
  return {
    async insert(t) {
      const values = [t.id, t.name, t.hash, t.prefix, t.scopes, iso(t.createdAt), iso(t.expiresAt), iso(t.revokedAt)];
      await run({ ...SQL.insert, values });
    },
    async findByHash(hash) {
      const [row] = await lookUp<TokenRow>({ ...SQL.byHash, values: [hash] });
      return row && tokenFromRow(row);
    },
    list: async () => (await run<TokenRow>(SQL.list)).map(tokenFromRow),
    async count() {
      const [row] = await run<{ n: string }>(SQL.count);
      return Number(row?.n ?? 0);
    },
    revoke: async (id, at) => (await run({ ...SQL.revoke, values: [at.toISOString(), id] })).length === 1,
    async insertTicket(t) {
      const forget = new Date(Date.now() - TICKET_KEPT_MS).toISOString();
      await run({ ...SQL.insertTicket, values: [t.hash, t.tokenHash, t.subject, t.scopes, iso(t.expiresAt), forget] });
    },
    async findTicket(hash) {
      const [row] = await lookUp<TicketRow>({ ...SQL.ticket, values: [hash] });
      return (
        row && {
          hash: row.hash,
          tokenHash: row.token_hash,
          subject: row.subject,
          scopes: row.scopes as Scope[],
          expiresAt: row.expires_at,
        }
      );
    },
  };
}

/** Tokens in a backup: read in a snapshot's transaction, written in a restore's, on its connection. */
export const tokensInBackup: RecordsInBackup<TokenRecord, Run> = {
  tables: ['tokens'],
  snapshot: (run) => ({
    async *pages() {
      yield (await run<TokenRow>(SQL.list)).map(tokenFromRow);
    },
  }),
  restore: (run) => ({
    async count() {
      const [row] = await run<{ n: string }>(SQL.count);
      return Number(row?.n ?? 0);
    },
    async insert(tokens) {
      if (tokens.length === 0) return 0;
      await run({
        text: `INSERT INTO tokens (id, name, hash, prefix, scopes, created_at, expires_at, revoked_at)
               SELECT u.id, u.name, u.hash, u.prefix, string_to_array(u.scopes, ' '), u.created_at, u.expires_at, u.revoked_at
               FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                           $6::timestamptz[], $7::timestamptz[], $8::timestamptz[])
                    AS u (id, name, hash, prefix, scopes, created_at, expires_at, revoked_at)`,
        values: [
          tokens.map((t) => t.id),
          tokens.map((t) => t.name),
          tokens.map((t) => t.hash),
          tokens.map((t) => t.prefix),
          tokens.map((t) => t.scopes.join(' ')),
          tokens.map((t) => t.createdAt.toISOString()),
          tokens.map((t) => iso(t.expiresAt)),
          tokens.map((t) => iso(t.revokedAt)),
        ],
      });
      return tokens.length;
    },
  }),
};
