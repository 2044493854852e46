import type { PoolClient, QueryConfig, QueryResultRow } from 'pg';
import type { EventType } from '../../domain/webhook.js';
import type { RestoreTarget, StoreSnapshot } from '../store.js';
import { storeError } from './errors.js';
import { postgresPlantTx } from './plant-tx.js';
import { oneByOne, plantFromRow, type PlantRow, type Run } from './rows.js';
import { tokenFromRow, type TokenRow } from './tokens.js';

/**
 * A restore's statements get this long (a lock held by a busy instance, a large batch); the
 * pool's 4 s is for requests.
 */
const RESTORE_STATEMENT_TIMEOUT_MS = 10 * 60_000;

/** Runs statements on one client; pg takes a per-query query_timeout that @types/pg does not declare. */
function runOnClient(client: PoolClient, queryTimeoutMs?: number): Run {
  return async <R extends QueryResultRow>(query: QueryConfig) => {
    try {
      const config =
        queryTimeoutMs === undefined ? query : ({ ...query, query_timeout: queryTimeoutMs } as QueryConfig);
      return (await client.query<R>(config)).rows;
    } catch (err) {
      throw storeError(err);
    }
  };
}

interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  secret: string;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
}

/**
 * A snapshot in one REPEATABLE READ, READ ONLY transaction on a connection of its own: every
 * statement of it sees the database as of its first, whatever other instances commit meanwhile.
 * Plants are read a page at a time by key. `release` gives the connection back (`true`: it broke).
 */
export async function postgresSnapshot(client: PoolClient, release: (broken: boolean) => void): Promise<StoreSnapshot> {
  const run = runOnClient(client);
  let open = true;
  const end = async (broken: boolean) => {
    if (!open) return;
    open = false;
    release(broken);
  };
  try {
    await run({ text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' });
    // The reader of the backup may pause (a slow pipe): the transaction may sit idle that long.
    // A vanished process's connection is closed, and its transaction ended, by the server.
    await run({ text: 'SET LOCAL idle_in_transaction_session_timeout = 0' });
    // The first query takes the snapshot.
    const [version] = await run<{ version: number }>({
      text: 'SELECT coalesce(max(version), 0) AS version FROM schema_migrations',
    });
    const step = async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } catch (err) {
        await end(true);
        throw err;
      }
    };
    return {
      schemaVersion: Number(version?.version ?? 0),
      tokens: () =>
        step(async () =>
          (await run<TokenRow>({ text: 'SELECT * FROM tokens ORDER BY created_at, id' })).map(tokenFromRow),
        ),
      endpoints: () =>
        step(async () =>
          (
            await run<EndpointRow>({
              text: `SELECT id, url, events, secret, enabled, disabled_reason, created_at
                     FROM webhook_endpoints ORDER BY created_at, id`,
            })
          ).map((e) => ({
            id: e.id,
            url: e.url,
            events: e.events as EventType[],
            secret: e.secret,
            enabled: e.enabled,
            disabledReason: e.disabled_reason,
            createdAt: new Date(Number(e.created_at)),
          })),
        ),
      plants: (after, limit) =>
        step(async () => {
          const query =
            after === undefined
              ? {
                  name: 'backup-plants-first',
                  text: 'SELECT id, name, tag FROM plants ORDER BY id LIMIT $1',
                  values: [limit],
                }
              : {
                  name: 'backup-plants-after',
                  text: 'SELECT id, name, tag FROM plants WHERE id > $1 ORDER BY id LIMIT $2',
                  values: [String(after), limit],
                };
          return (await run<PlantRow>(query)).map(plantFromRow);
        }),
      close: async () => {
        if (!open) return;
        try {
          await run({ text: 'COMMIT' });
          await end(false);
        } catch (err) {
          await end(true);
          throw err;
        }
      },
    };
  } catch (err) {
    await end(true);
    throw err;
  }
}

/**
 * Runs a restore in one transaction on `client`. The three tables are locked against writes
 * (SHARE ROW EXCLUSIVE: reads go on, other instances' writes wait) so that the store stays as
 * `counts` found it until the commit. Plants go in through the write path's own insert, which
 * writes the words of their names with them (plant-words.ts): the store is searchable from the
 * commit on, and a restore that fails leaves neither plants nor words.
 */
export async function postgresRestore<T>(client: PoolClient, work: (target: RestoreTarget) => Promise<T>): Promise<T> {
  const run = runOnClient(client, RESTORE_STATEMENT_TIMEOUT_MS + 5_000);
  await run({ text: 'BEGIN' });
  try {
    await run({ text: `SET LOCAL statement_timeout = ${RESTORE_STATEMENT_TIMEOUT_MS}` });
    // The backup is read while the transaction is open, from a pipe that may pause.
    await run({ text: 'SET LOCAL idle_in_transaction_session_timeout = 0' });
    // The indexes are kept up row by row: dropping one would take ACCESS EXCLUSIVE, and hold
    // every read of plants until the commit.
    await run({ text: 'LOCK TABLE plants, tokens, webhook_endpoints IN SHARE ROW EXCLUSIVE MODE' });
    const plants = postgresPlantTx(oneByOne(run));
    const target: RestoreTarget = {
      async counts() {
        const [c] = await run<{ plants: string; tokens: string; endpoints: string }>({
          text: `SELECT (SELECT count(*) FROM plants) AS plants, (SELECT count(*) FROM tokens) AS tokens,
                        (SELECT count(*) FROM webhook_endpoints) AS endpoints`,
        });
        return { plants: Number(c!.plants), tokens: Number(c!.tokens), endpoints: Number(c!.endpoints) };
      },
      async insertTokens(tokens) {
        if (tokens.length === 0) return;
        const iso = (d: Date | null) => d?.toISOString() ?? null;
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
      },
      async insertEndpoints(endpoints) {
        for (const e of endpoints) {
          await run({
            text: `INSERT INTO webhook_endpoints (id, url, events, secret, enabled, disabled_reason, created_at)
                   VALUES ($1, $2, $3, $4, $5, $6, $7)`,
            values: [e.id, e.url, e.events, e.secret, e.enabled, e.disabledReason, String(e.createdAt.getTime())],
          });
        }
      },
      async insertPlants(list) {
        return (await plants.insert(list)).size;
      },
    };
    const result = await work(target);
    await run({ text: 'COMMIT' });
    return result;
  } catch (err) {
    await run({ text: 'ROLLBACK' }).catch(() => undefined);
    throw err;
  }
}
