// The migration that names the change log's table for it (`events` becomes `changes`, and
// `change_log`, which holds only the floor, `change_floor`), on a store made at the schema
// version before it and holding changes: every change keeps its position and its text, the
// webhook delivery that points at one still does, and the log goes on from where it was.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openStore } from '../../src/store/open-store.js';
import { postgresMigrations } from '../../src/store/postgres/migrations.js';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.js';
import { registerIndexedWords } from '../../src/store/sqlite/search-index.js';
import { createTestStore, POSTGRES_URL, stores, suiteOptions, type TestStore } from '../support/stores.js';

const PLANTS = [
  { id: 1, name: 'Fern', tag: 'green' },
  { id: 2, name: 'Cactus', tag: null },
  { id: 3, name: 'Monstera', tag: 'green' },
];

const plantsSql = `INSERT INTO plants (id, name, tag) VALUES (1, 'Fern', 'green'), (2, 'Cactus', NULL), (3, 'Monstera', 'green')`;

/**
 * The log's rows as the write path wrote them at the previous version: one creation per plant,
 * from the floor on; and an endpoint with a delivery still pending for the second.
 */
const logSql = (floor: bigint) => `
  INSERT INTO events (seq, type, plant_id, body, tag, old_tag, created_at) VALUES
  ${PLANTS.map(
    (p, i) =>
      `(${floor + BigInt(i)}, 'plant.created', ${p.id}, '${JSON.stringify(p.tag ? p : { id: p.id, name: p.name })}', ` +
      `${p.tag ? `'${p.tag}'` : 'NULL'}, NULL, ${1_700_000_000_000 + i})`,
  ).join(',\n')};
  INSERT INTO webhook_endpoints (id, url, events, secret, enabled, created_at)
  VALUES ('ep_a', 'https://example.com/hook', %events%, 'secret', %true%, 0);
  INSERT INTO deliveries (event_seq, endpoint_id, plant_id, next_attempt_at) VALUES (${floor + 1n}, 'ep_a', 2, 0);`;

/** A SQLite store at schema version `version`, holding the plants and their log. */
function sqliteAt(db: TestStore, version: number): bigint {
  const file = new Database(db.databaseUrl.slice('sqlite:'.length));
  try {
    registerIndexedWords(file);
    file.pragma('foreign_keys = OFF');
    for (const sql of sqliteMigrations.slice(0, version)) file.exec(sql);
    file.pragma(`user_version = ${version}`);
    file.pragma('foreign_keys = ON');
    file.exec(plantsSql);
    const floor = file.prepare('SELECT floor FROM change_log').safeIntegers().pluck().get() as bigint;
    file.exec(logSql(floor).replace('%events%', "'plant.created'").replace('%true%', '1'));
    return floor;
  } finally {
    file.close();
  }
}

/** A PostgreSQL store (its schema) at schema version `version`, holding the plants and their log. */
async function postgresAt(db: TestStore, version: number): Promise<bigint> {
  const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`BEGIN; CREATE SCHEMA ${schema}; SET LOCAL search_path = ${schema}`);
    for (const migration of postgresMigrations.slice(0, version)) {
      if (typeof migration === 'string') await client.query(migration);
      else await migration((q) => client.query(q));
    }
    await client.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO schema_migrations (version) SELECT generate_series(1, ${version});
      ${plantsSql}`);
    const { rows } = await client.query<{ floor: string }>('SELECT floor::text AS floor FROM change_log');
    const floor = BigInt(rows[0]!.floor);
    await client.query(logSql(floor).replace('%events%', "'{plant.created}'").replace('%true%', 'true'));
    await client.query('COMMIT');
    return floor;
  } finally {
    await client.end();
  }
}

for (const kind of stores) {
  describe(`the change log's table renamed, on a store of the version before [${kind}]`, suiteOptions(kind), () => {
    const db = createTestStore(kind);
    after(() => db.drop());

    it('keeps every change, its position and its delivery; the log goes on after them', async () => {
      const migrations = kind === 'sqlite' ? sqliteMigrations : postgresMigrations;
      // Migration 11 renames the log: a store made by the release before it has 10.
      const before = 10;
      const floor = kind === 'sqlite' ? sqliteAt(db, before) : await postgresAt(db, before);
      const { store, migrated } = await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 2 });
      try {
        assert.equal(migrated, migrations.length - before);
        const last = floor + BigInt(PLANTS.length - 1);
        assert.deepEqual(await store.changes.bounds(), { floor, current: last });
        const { changes } = await store.changes.read(floor - 1n, last, 10, {});
        assert.deepEqual(
          changes.map((c) => [c.position, c.type, c.id]),
          PLANTS.map((p, i) => [floor + BigInt(i), 'created', BigInt(p.id)]),
        );
        assert.match(changes[0]!.json, /"plant":\{"id":1,"name":"Fern","tag":"green"\}/);
        // The feed's filters read the renamed table and its index.
        const tagged = await store.changes.read(floor - 1n, last, 10, { tags: ['green'] });
        assert.deepEqual(
          tagged.changes.map((c) => c.id),
          [1n, 3n],
        );
        const one = await store.changes.read(floor - 1n, last, 10, { id: 2n });
        assert.deepEqual(
          one.changes.map((c) => c.position),
          [floor + 1n],
        );
        // The pending delivery still points at its change: the dispatcher claims it.
        const now = Date.now();
        const claimed = await store.webhooks.claimDeliveries(now, now + 60_000, new Map([['ep_a', 10]]));
        assert.deepEqual(
          claimed.map((d) => [d.eventSeq, d.endpointId]),
          [[floor + 1n, 'ep_a']],
        );
        // A new change takes the position after the last one.
        const written = await store.plants.write({ kind: 'create', plant: { id: 4n, name: 'Lemon' } });
        assert.equal(written.position, last + 1n);
        assert.equal((await store.changes.bounds()).current, last + 1n);
      } finally {
        await store.close();
      }
    });
  });
}
