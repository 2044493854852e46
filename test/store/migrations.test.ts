// Migrations applied to a store that an earlier version left: here, tokens registered from an
// operator's own value (PLANT_STORE_TOKEN) lose the 8 characters of it that were kept as their
// prefix; a managed token keeps its "pst_" and 4 random characters.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../src/store/open-store.js';
import { postgresMigrations } from '../../src/store/postgres/migrations.js';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.js';
import { createTestStore, postgresSql, stores, suiteOptions } from '../support/stores.js';

const TOKENS = `INSERT INTO tokens (id, name, hash, prefix, scopes, created_at) VALUES
  ('op', 'bootstrap (PLANT_STORE_TOKEN)', 'h1', 'Sup3rSec', %scopes%, %now%),
  ('managed', 'ci', 'h2', 'pst_AbCd', %scopes%, %now%),
  ('looks-managed', 'bootstrap (PLANT_STORE_TOKEN)', 'h3', 'pst_Oper', %scopes%, %now%)`;

for (const kind of stores) {
  describe(`migrating a store of version 2 [${kind}]`, suiteOptions(kind), () => {
    const db = createTestStore(kind);
    after(() => db.drop());

    it("clears the kept prefix of operators' own tokens, and only theirs", async () => {
      if (kind === 'sqlite') {
        const file = new Database(db.databaseUrl.slice('sqlite:'.length));
        for (const sql of sqliteMigrations.slice(0, 2)) file.exec(sql);
        file.pragma('user_version = 2');
        file.exec(TOKENS.replaceAll('%scopes%', "'plants:read'").replaceAll('%now%', '0'));
        file.close();
      } else {
        const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
        await postgresSql(`CREATE SCHEMA ${schema}; SET search_path = ${schema};
          ${postgresMigrations.slice(0, 2).join(';\n')};
          CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO schema_migrations (version) VALUES (1), (2);
          ${TOKENS.replaceAll('%scopes%', "'{plants:read}'").replaceAll('%now%', 'now()')}`);
      }
      const { store, migrated } = await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 });
      try {
        assert.ok(migrated >= 1);
        const prefixes = Object.fromEntries((await store.tokens.list()).map((t) => [t.id, t.prefix]));
        assert.deepEqual(prefixes, { op: '', managed: 'pst_AbCd', 'looks-managed': '' });
      } finally {
        await store.close();
      }
    });
  });
}

describe('released migrations', () => {
  // What each migration ran when it was released: a store records how many ran, so a changed
  // text would never run on the stores that have it, and two stores of one version would differ.
  const released = {
    sqlite: [
      '834ede269f27c16a',
      '4b2c59a43dc8a7fa',
      '3af570ef5873bd3f',
      '1682577a1577f228',
      '4928113489e7ccf2',
      '75786affba1f6c35',
    ],
    postgres: [
      'ddb28568e9807095',
      '4919c8686b4d3bbb',
      '3af570ef5873bd3f',
      '9caa0158e1bb8880',
      'b0e6cd34219f7dfb',
      'e00681adb6a5f9bd',
    ],
  };
  const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

  it('keep their text byte for byte', () => {
    for (const [kind, migrations] of [
      ['sqlite', sqliteMigrations],
      ['postgres', postgresMigrations],
    ] as const) {
      const texts = migrations.slice(0, released[kind].length).map((m) => (typeof m === 'string' ? digest(m) : 'code'));
      assert.deepEqual(texts, released[kind], kind);
    }
  });
});
