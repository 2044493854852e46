// A store that a newer plant-store migrated is refused by an older one, in one line, and left
// as it is: never migrated "back", never recorded as older.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../src/store/open-store.js';
import { cli } from '../support/cli.js';
import { createTestStore, postgresSql, stores, suiteOptions } from '../support/stores.js';

for (const kind of stores) {
  describe(`a store of a newer schema [${kind}]`, suiteOptions(kind), () => {
    const db = createTestStore(kind);
    after(() => db.drop());

    it('is refused with one line, and its recorded version is left as it is', async () => {
      await (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 })).store.close();
      const schema = kind === 'postgres' ? new URL(db.databaseUrl).searchParams.get('schema') : undefined;
      if (kind === 'sqlite') {
        const file = new Database(db.databaseUrl.slice('sqlite:'.length));
        file.pragma('user_version = 99');
        file.close();
      } else {
        await postgresSql(`INSERT INTO ${schema}.schema_migrations (version) VALUES (99)`);
      }
      const r = await cli(['migrate'], { DATABASE_URL: db.databaseUrl });
      assert.equal(r.status, 1);
      assert.match(
        r.stderr,
        /^plant-store: the store's schema is version 99, newer than this plant-store knows \(\d+\)/,
      );
      assert.equal(r.stderr.trim().split('\n').length, 1);
      if (kind === 'sqlite') {
        const file = new Database(db.databaseUrl.slice('sqlite:'.length));
        assert.equal(file.pragma('user_version', { simple: true }), 99);
        file.close();
      } else {
        const { rows } = await postgresSql(`SELECT max(version) AS v FROM ${schema}.schema_migrations`);
        assert.equal(Number((rows[0] as { v: number }).v), 99);
      }
    });
  });
}
