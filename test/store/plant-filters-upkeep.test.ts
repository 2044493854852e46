// The search follows every way plants change, on both stores: the write path (a new name, a
// delete), a restore (which builds the filters once its plants are in, and leaves them as the
// migration made them, whether it succeeds or fails), and the migration that brings the filters
// to a store that already holds plants (the words of those plants are filled in).
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { PlantListQuery } from '../../src/domain/plant-query.js';
import { loadDocument } from '../../src/openapi/document.js';
import { openStore } from '../../src/store/open-store.js';
import { postgresMigrations } from '../../src/store/postgres/migrations.js';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.js';
import type { Store } from '../../src/store/store.js';
import { RestoreRefusedError, restoreStore } from '../../src/use-cases/restore.js';
import { backupFile, header } from '../support/backup-file.js';
import { found as expected, NAMES, searches } from '../support/search-corpus.js';
import { createTestStore, postgresSql, stores, suiteOptions, type TestStore } from '../support/stores.js';
import { searchWords } from '../../src/domain/search-words.js';

/** The schema version before the filters' migration. */
const BEFORE = 3;
/** The schema version that brought the search's one rule (searchWords) to the stores. */
const RULE = 8;

/** No sealed secrets and no endpoints in these backups: the settings restore judges them by. */
const webhookRules = { webhookAllowPrivate: false, webhookSecretKey: undefined };
const open = async (databaseUrl: string) => (await openStore({ databaseUrl, databasePoolSize: 2 })).store;
const found = async (store: Store, query: PlantListQuery) => (await store.plants.list(query, 100)).map((p) => p.id);

/**
 * What keeps the filters up on `plants`, read from the catalog: SQLite's indexes and triggers
 * with their SQL; PostgreSQL's indexes and triggers with their definitions and whether enabled.
 */
async function upkeep(db: TestStore): Promise<unknown> {
  if (db.kind === 'sqlite') {
    const file = new Database(db.databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      return file
        .prepare(
          `SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'plants' AND type <> 'table' ORDER BY name`,
        )
        .all();
    } finally {
      file.close();
    }
  }
  const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
  const indexes = await postgresSql(
    `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = '${schema}' AND tablename = 'plants' ORDER BY 1`,
  );
  const triggers = await postgresSql(
    `SELECT tgname, tgenabled, pg_get_triggerdef(oid) AS def FROM pg_trigger
     WHERE tgrelid = '${schema}.plants'::regclass AND NOT tgisinternal ORDER BY 1`,
  );
  return { indexes: indexes.rows, triggers: triggers.rows };
}

/** A backup of `count` plants (several of restore's batches), by id, with three tags. */
function plantsBackup(kind: TestStore['kind'], count: number, bad?: { at: number; line: string }): string {
  const lines = [header({ store: kind })];
  for (let i = 1; i <= count; i++) {
    lines.push(
      i === bad?.at ? bad.line : JSON.stringify({ type: 'plant', id: i, name: `Fern number ${i}`, tag: `t${i % 3}` }),
    );
  }
  return backupFile(lines);
}

for (const kind of stores) {
  describe(`the search follows the plants [${kind}]`, suiteOptions(kind), () => {
    const dbs: TestStore[] = [];
    const fresh = () => {
      const db = createTestStore(kind);
      dbs.push(db);
      return db;
    };
    after(() => Promise.all(dbs.map((db) => db.drop())));

    it('after a new name, a patch, a delete and a re-creation through the write path', async () => {
      const store = await open(fresh().databaseUrl);
      try {
        await store.plants.write({ kind: 'create', plant: { id: 1n, name: 'Monstera deliciosa', tag: 'big' } });
        await store.plants.write({ kind: 'create', plant: { id: 2n, name: 'Lemon tree' } });
        assert.deepEqual(await found(store, { search: searchWords('monstera') }), [1n]);
        await store.plants.write({ kind: 'replace', plant: { id: 1n, name: 'Rubber fig', tag: 'big' } });
        assert.deepEqual(await found(store, { search: searchWords('monstera') }), []);
        assert.deepEqual(await found(store, { search: searchWords('fig'), tags: ['big'] }), [1n]);
        await store.plants.write({ kind: 'patch', id: 2n, patch: { tag: 'small' } });
        assert.deepEqual(await found(store, { search: searchWords('lemon'), tags: ['small'] }), [2n]);
        await store.plants.write({ kind: 'patch', id: 2n, patch: { name: 'Lime tree' } });
        assert.deepEqual(await found(store, { search: searchWords('lemon') }), []);
        assert.deepEqual(await found(store, { search: searchWords('tree') }), [2n]);
        await store.plants.write({ kind: 'delete', id: 1n });
        assert.deepEqual(await found(store, { search: searchWords('fig') }), []);
        assert.deepEqual(await found(store, { tags: ['big'] }), []);
        await store.plants.write({ kind: 'create', plant: { id: 1n, name: 'Fig again' } });
        assert.deepEqual(await found(store, { search: searchWords('fig') }), [1n]);
        // The words of the deleted plant went with it: the new plant of its id has none of them.
        assert.deepEqual(await found(store, { search: searchWords('rubber') }), []);
        // A batch of writes in one transaction (import): each write sees the one before.
        await store.plants.writeAll([
          { kind: 'create', plant: { id: 3n, name: 'Café one' } },
          { kind: 'patch', id: 3n, patch: { name: 'Café two' } },
          { kind: 'create', plant: { id: 4n, name: 'Café four' } },
          { kind: 'delete', id: 4n },
        ]);
        assert.deepEqual(await found(store, { search: searchWords('cafe') }), [3n]);
        assert.deepEqual(await found(store, { search: searchWords('cafe one') }), []);
      } finally {
        await store.close();
      }
    });

    it('after a restore', async () => {
      const db = fresh();
      const store = await open(db.databaseUrl);
      try {
        const migrated = await upkeep(db);
        await store.restoreInto((target) =>
          target.records.plants.insert([
            { id: -9n, name: 'Fiddle-leaf fig', tag: 'tree' },
            { id: 4n, name: 'Weeping fig' },
          ]),
        );
        assert.deepEqual(await found(store, { search: searchWords('FIG') }), [-9n, 4n]);
        assert.deepEqual(await found(store, { search: searchWords('fig'), tags: ['tree'] }), [-9n]);
        assert.deepEqual(await found(store, { tags: ['tree'] }), [-9n]);
        // The filters are kept up as the migration made them: the writes after the restore are found.
        assert.deepEqual(await upkeep(db), migrated);
        await store.plants.write({ kind: 'patch', id: 4n, patch: { name: 'Weeping willow', tag: 'tree' } });
        assert.deepEqual(await found(store, { search: searchWords('fig') }), [-9n]);
        assert.deepEqual(await found(store, { search: searchWords('willow'), tags: ['tree'] }), [4n]);
      } finally {
        await store.close();
      }
    });

    it('after a restore of a backup file, in several batches', async () => {
      const db = fresh();
      const store = await open(db.databaseUrl);
      try {
        const report = await restoreStore(
          store,
          loadDocument(),
          Readable.from([plantsBackup(kind, 5000)]),
          webhookRules,
        );
        assert.equal(report.plants, 5000);
        assert.deepEqual(await found(store, { search: searchWords('fern 4321') }), [4321n]);
        assert.equal((await store.plants.list({ search: searchWords('number'), after: 4900n }, 1000)).length, 100);
        assert.deepEqual(await found(store, { search: searchWords('4999'), tags: ['t1'] }), [4999n]);
        assert.deepEqual(await found(store, { search: searchWords('4999'), tags: ['t0'] }), []);
        assert.equal((await store.plants.list({ tags: ['t1'] }, 5000)).length, 1667);
      } finally {
        await store.close();
      }
    });

    it('after a restore that fails near the end: the store is empty and keeps its filters up', async () => {
      const db = fresh();
      const store = await open(db.databaseUrl);
      try {
        const migrated = await upkeep(db);
        // Line 4,900 of 5,000: two batches of plants are in when it is read.
        const bad = { at: 4899, line: JSON.stringify({ type: 'plant', id: 4899, name: 'x'.repeat(300) }) };
        await assert.rejects(
          restoreStore(store, loadDocument(), Readable.from([plantsBackup(kind, 5000, bad)]), webhookRules),
          (err) => err instanceof RestoreRefusedError && /line 4900: name must have at most 256/.test(err.message),
        );
        assert.equal(await store.plants.count(), 0);
        assert.deepEqual(await upkeep(db), migrated);
        await store.plants.write({ kind: 'create', plant: { id: 7n, name: 'Fern after', tag: 't1' } });
        assert.deepEqual(await found(store, { search: searchWords('fern') }), [7n]);
        assert.deepEqual(await found(store, { tags: ['t1'] }), [7n]);
      } finally {
        await store.close();
      }
    });

    it(`after the migration of a store of version ${BEFORE} that holds plants`, async () => {
      const db = fresh();
      const plants = `INSERT INTO plants (id, name, tag) VALUES
        (-9223372036854775808, 'Monstera deliciosa', 'tropical'), (5, 'Café monstera', NULL), (6, 'Lemon', 'tropical')`;
      if (kind === 'sqlite') {
        const file = new Database(db.databaseUrl.slice('sqlite:'.length));
        for (const sql of sqliteMigrations.slice(0, BEFORE)) file.exec(sql);
        file.pragma(`user_version = ${BEFORE}`);
        file.exec(plants);
        file.close();
      } else {
        const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
        await postgresSql(`CREATE SCHEMA ${schema}; SET LOCAL search_path = ${schema};
          ${postgresMigrations.slice(0, BEFORE).join(';\n')};
          CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO schema_migrations (version) SELECT generate_series(1, ${BEFORE});
          ${plants}`);
      }
      const { store, migrated } = await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 });
      try {
        assert.equal(migrated, (kind === 'sqlite' ? sqliteMigrations : postgresMigrations).length - BEFORE);
        assert.deepEqual(await found(store, { search: searchWords('monstera') }), [-(2n ** 63n), 5n]);
        assert.deepEqual(await found(store, { search: searchWords('cafe') }), [5n]);
        assert.deepEqual(await found(store, { tags: ['tropical'] }), [-(2n ** 63n), 6n]);
        // And the words follow the writes that come after it (the write path's statements).
        await store.plants.write({ kind: 'delete', id: 5n });
        assert.deepEqual(await found(store, { search: searchWords('monstera') }), [-(2n ** 63n)]);
      } finally {
        await store.close();
      }
    });

    it(`after the migration of a store of version ${RULE - 1} whose names each store split its own way`, async () => {
      const db = fresh();
      const corpus = new Map(NAMES.map((name, i) => [i + 1, name]));
      const values = [...corpus].map(([id, name]) => `(${id}, '${name.replaceAll("'", "''")}')`).join(', ');
      let before: unknown;
      if (kind === 'sqlite') {
        const file = new Database(db.databaseUrl.slice('sqlite:'.length));
        for (const sql of sqliteMigrations.slice(0, RULE - 1)) file.exec(sql);
        file.pragma(`user_version = ${RULE - 1}`);
        // As that version's write path left them: each name in plants_fts, as FTS5 split it.
        file.exec(
          `INSERT INTO plants (id, name) VALUES ${values}; INSERT INTO plants_fts (plants_fts) VALUES ('rebuild')`,
        );
        before = file.prepare(`SELECT rowid FROM plants_fts WHERE plants_fts MATCH '"ह"'`).pluck().all();
        file.close();
      } else {
        const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
        await postgresSql(`CREATE SCHEMA ${schema}; SET LOCAL search_path = ${schema};
          ${postgresMigrations.slice(0, RULE - 1).join(';\n')};
          CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO schema_migrations (version) SELECT generate_series(1, ${RULE - 1});
          INSERT INTO plants (id, name) VALUES ${values}`);
        before = (await postgresSql(`SELECT id FROM ${schema}.plant_words WHERE word = 'x' ORDER BY id`)).rows;
      }
      // The old indexes split these names otherwise: "ह" was a word of "हिन्दी" in FTS5, "x" one of "x²" in PostgreSQL.
      assert.deepEqual(before, kind === 'sqlite' ? [3] : [{ id: '1' }]);
      const { store, migrated } = await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 });
      try {
        assert.equal(migrated, (kind === 'sqlite' ? sqliteMigrations : postgresMigrations).length - (RULE - 1));
        const wrong: string[] = [];
        for (const q of searches) {
          const want = expected(corpus, q);
          if (want === 400) continue;
          const got = (await found(store, { search: searchWords(q) })).map(Number);
          if (!isDeepStrictEqual(got, want)) wrong.push(`${q}: ${got.join()} instead of ${want.join()}`);
        }
        assert.deepEqual(wrong, []);
        // The words written by the migration are the ones the write path takes out again.
        await store.plants.writeAll([
          { kind: 'replace', plant: { id: 1n, name: 'y plant' } },
          { kind: 'delete', id: 2n },
        ]);
        assert.deepEqual(await found(store, { search: searchWords('x2') }), []);
        assert.deepEqual(await found(store, { search: searchWords('αλφα') }), []);
        assert.deepEqual(await found(store, { search: searchWords('y plant') }), [1n]);
      } finally {
        await store.close();
      }
    });
  });
}

describe('a new name touches only the words that changed [postgres]', suiteOptions('postgres'), () => {
  const db = createTestStore('postgres');
  after(() => db.drop());

  it('keeps the entries of the words both names share, in a batch of renames too', async () => {
    const store = await open(db.databaseUrl);
    const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
    // Each entry with where its row version is: a row taken out and put back gets a new place.
    const entries = async () =>
      Object.fromEntries(
        (
          await postgresSql(`SELECT id || ' ' || word AS entry, ctid::text AS at FROM ${schema}.plant_words ORDER BY 1`)
        ).rows.map((r: { entry: string; at: string }) => [r.entry, r.at]),
      );
    try {
      await store.plants.writeAll([
        { kind: 'create', plant: { id: 1n, name: 'Monstera deliciosa' } },
        { kind: 'create', plant: { id: 2n, name: 'Ficus lyrata' } },
      ]);
      const before = await entries();
      await store.plants.writeAll([
        { kind: 'replace', plant: { id: 1n, name: 'Monstera deliciosa variegata' } },
        { kind: 'replace', plant: { id: 2n, name: 'Ficus elastica' } },
      ]);
      const now = await entries();
      assert.deepEqual(Object.keys(now), ['1 deliciosa', '1 monstera', '1 variegata', '2 elastica', '2 ficus']);
      for (const kept of ['1 deliciosa', '1 monstera', '2 ficus']) assert.equal(now[kept], before[kept], kept);
      assert.deepEqual(await found(store, { search: searchWords('lyrata') }), []);
      assert.deepEqual(await found(store, { search: searchWords('monstera variegata') }), [1n]);
    } finally {
      await store.close();
    }
  });
});
