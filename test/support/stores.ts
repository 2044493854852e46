import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore } from '../../src/store/open-store.js';

export type StoreKind = 'sqlite' | 'postgres';

/** The PostgreSQL server the postgres half of the suite uses; each test store is a schema of its own there. */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';

/**
 * With CI=true, where PostgreSQL unreachable fails the run, tried for up to 20 s: on a loaded
 * machine (the suite's processes starting at once beside other work) one connection's 3 s ran out
 * while PostgreSQL was up, and a part of the suite failed whole. Elsewhere once: the postgres
 * suites then skip without a wait.
 */
async function probePostgres(): Promise<string | undefined> {
  const until = Date.now() + (process.env.CI === 'true' ? 20_000 : 0);
  for (;;) {
    const problem = await probeOnce();
    if (problem === undefined || Date.now() >= until) return problem;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function probeOnce(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message || String((err as { code?: string }).code) : String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const postgresProblem = await probePostgres();
if (postgresProblem !== undefined && process.env.CI === 'true') {
  throw new Error(`PostgreSQL at ${POSTGRES_URL} is unreachable (${postgresProblem}); with CI=true that fails the run`);
}

/**
 * Set by scripts/test-pgbouncer.ts: TEST_POSTGRES_URL is PgBouncer's, in transaction pooling mode.
 * The suites looped over both stores then run on PostgreSQL only, and the few tests of a direct
 * connection (one the operator sets at start-up, one whose server process ends with it) skip.
 */
export const behindPgBouncer = process.env.TEST_POSTGRES_POOLER === 'pgbouncer';

/** Every store the HTTP and CLI suites run against; each suite is written once and looped over these. */
export const stores: readonly StoreKind[] = behindPgBouncer ? ['postgres'] : ['sqlite', 'postgres'];

/**
 * Options for a store's `describe`: the postgres suites skip, saying why, when PostgreSQL cannot
 * be reached outside CI (in CI the import above has already failed the run).
 */
export function suiteOptions(store: StoreKind): { skip?: string } {
  if (store === 'postgres' && postgresProblem !== undefined) {
    return { skip: `PostgreSQL at ${POSTGRES_URL} is unreachable (${postgresProblem}); set CI=true to fail instead` };
  }
  return {};
}

export interface TestStore {
  kind: StoreKind;
  databaseUrl: string;
  /** Deletes everything the store held: the SQLite file's folder, or the PostgreSQL schema. */
  drop(): Promise<void>;
}

/** A fresh, empty store: a temporary SQLite file, or a PostgreSQL schema of its own (created by the first migration). */
export function createTestStore(kind: StoreKind): TestStore {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-test-'));
    return {
      kind,
      databaseUrl: `sqlite:${join(dir, 'plant-store.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `plant_store_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return {
    kind,
    databaseUrl: url.toString(),
    drop: async () => void (await postgresSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
  };
}

/**
 * A fresh store that exists, migrated and empty, as `plant-store migrate` leaves one: what the
 * commands other than migrate and restore need (they create no store).
 */
export async function createMigratedTestStore(kind: StoreKind): Promise<TestStore> {
  const s = createTestStore(kind);
  const { store } = await openStore({ databaseUrl: s.databaseUrl, databasePoolSize: 2 });
  await store.close();
  return s;
}

/** Runs one statement on the test PostgreSQL server, outside any store. */
export async function postgresSql(text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

export function storeKindOf(databaseUrl: string): StoreKind {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}
