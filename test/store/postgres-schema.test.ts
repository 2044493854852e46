// Where a PostgreSQL store's tables go: the schema of `?schema=`, quoted into SQL, whatever plain
// identifier it is; never PostgreSQL's own catalogue, however the search_path leads there.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { plantRecord } from '../../src/domain/plant.js';
import { openStore } from '../../src/store/open-store.js';
import { behindPgBouncer, POSTGRES_URL, postgresSql, suiteOptions } from '../support/stores.js';

/** SQL's reserved words: plain lower-case identifiers that PostgreSQL takes as names only quoted. */
const KEYWORDS = ['user', 'select', 'table', 'order', 'group', 'where', 'from', 'limit', 'union', 'check'];
/** What the migrations create, to clear away should a store ever be made where it must not be. */
const TABLES = [
  'change_floor',
  'changes',
  'deliveries',
  'plant_words',
  'plants',
  'schema_migrations',
  'tokens',
  'webhook_endpoints',
];

const urlWith = (params: Record<string, string>) => {
  const url = new URL(POSTGRES_URL);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
};

describe('the PostgreSQL schema of the store', suiteOptions('postgres'), () => {
  const dropped: string[] = [];
  after(async () => {
    for (const schema of dropped) await postgresSql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it('takes a ?schema= that is an SQL keyword (user, select, …): its name is quoted where SQL holds it', async () => {
    // One not in use, so that suites running at once on this server do not share it.
    const { rows } = await postgresSql(`SELECT nspname FROM pg_namespace`);
    const taken = new Set(rows.map((r: { nspname: string }) => r.nspname));
    const schema = KEYWORDS.filter((k) => !taken.has(k))[Math.floor(Math.random() * 3)]!;
    dropped.push(schema);
    const { store, migrated } = await openStore({ databaseUrl: urlWith({ schema }), databasePoolSize: 1 });
    try {
      assert.ok(migrated > 0);
      await store.plants.writeAll([{ kind: 'create', plant: plantRecord(1n, 'Fern', undefined) }]);
      assert.equal((await store.plants.get(1n))?.name, 'Fern');
    } finally {
      await store.close();
    }
    const tables = await postgresSql(`SELECT tablename FROM pg_tables WHERE schemaname = '${schema}'`);
    assert.ok(
      tables.rows.some((r: { tablename: string }) => r.tablename === 'plants'),
      `plants is in "${schema}"`,
    );
  });

  const startUpOptions = behindPgBouncer && {
    skip: 'PgBouncer refuses options= at start-up (the manual, Behind PgBouncer)',
  };
  it(
    "refuses, in one line, a search_path whose first schema is PostgreSQL's own, and creates nothing there",
    { ...startUpOptions },
    async () => {
      const databaseUrl = urlWith({ options: '-c search_path=information_schema' });
      try {
        await assert.rejects(openStore({ databaseUrl, databasePoolSize: 1 }), (err: Error) =>
          /^the store's tables would go into "information_schema", PostgreSQL's own schema.*\?schema= in DATABASE_URL$/.test(
            err.message,
          ),
        );
        const made = await postgresSql(
          `SELECT tablename FROM pg_tables WHERE schemaname = 'information_schema' AND tablename IN ('${TABLES.join("','")}')`,
        );
        assert.deepEqual(made.rows, []);
      } finally {
        await postgresSql(
          `DROP TABLE IF EXISTS ${TABLES.map((t) => `information_schema.${t}`).join(', ')} CASCADE;
         DROP FUNCTION IF EXISTS information_schema.plant_name_words(text), information_schema.plant_words_follow() CASCADE`,
        );
      }
    },
  );
});
