import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cli } from '../support/cli.js';
import { createMigratedTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

const plants = [
  '{"id":-9223372036854775808,"name":"min","tag":""}',
  '{"id":-1,"name":"Fern 🌿","tag":"green"}',
  '{"id":9007199254740993,"name":"past 2^53"}',
  '{"id":9223372036854775807,"name":"max","tag":"quote \\" and \\\\ backslash"}',
];

for (const store of stores) {
  describe(`export and import [${store}]`, suiteOptions(store), () => {
    const created: TestStore[] = [];
    const fresh = async (kind = store) => {
      const s = await createMigratedTestStore(kind);
      created.push(s);
      return { DATABASE_URL: s.databaseUrl };
    };
    let a: { DATABASE_URL: string };
    before(async () => void (a = await fresh()));
    after(() => Promise.all(created.map((s) => s.drop())));

    it('round-trips a store exactly, ids above 2^53 included', async () => {
      const imported = await cli(['import'], a, `${[...plants].reverse().join('\n')}\n`);
      assert.equal(imported.status, 0, imported.stderr);
      assert.match(imported.stdout, /4 created, 0 skipped/);
      const exported = await cli(['export'], a);
      assert.equal(exported.status, 0);
      assert.equal(exported.stdout, `${plants.join('\n')}\n`);
      const b = await fresh();
      assert.equal((await cli(['import'], b, exported.stdout)).status, 0);
      assert.equal((await cli(['export'], b)).stdout, exported.stdout);
    });

    it('skips identical plants, refuses conflicting ones, reports bad lines by number, finishes the rest, exits 1', async () => {
      const input = [
        plants[0],
        '{"id":-1,"name":"changed"}',
        '',
        'not json',
        '{"id":1.5,"name":"x"}',
        '{"id":2,"name":"two","id":3}',
        '{"id":77,"name":"new"}',
        '{"id":77,"name":"new"}',
        '{"id":77,"name":"other"}',
      ].join('\n');
      const r = await cli(['import'], a, input);
      assert.equal(r.status, 1);
      assert.match(r.stdout, /1 created, 2 skipped \(identical\), 2 refused \(conflicting\), 3 invalid/);
      assert.match(r.stderr, /^line 2: plant -1 already exists/m);
      assert.match(r.stderr, /^line 4: invalid JSON/m);
      assert.match(r.stderr, /^line 5: id must be an integer/m);
      assert.match(r.stderr, /^line 6: .*duplicate member name "id"/m);
      assert.match(r.stderr, /^line 9: plant 77 already exists/m);
      const exported = (await cli(['export'], a)).stdout;
      assert.match(exported, /\{"id":-1,"name":"Fern 🌿","tag":"green"\}/, 'the conflicting plant is left as it was');
      assert.match(exported, /\{"id":77,"name":"new"\}/);
    });

    it('exports an empty store as nothing', async () => {
      const r = await cli(['export'], await fresh());
      assert.equal(r.status, 0);
      assert.equal(r.stdout, '');
    });

    if (store === 'postgres') {
      it('moves plants from SQLite to PostgreSQL and back, exactly', async () => {
        const lite = await fresh('sqlite');
        assert.equal((await cli(['import'], lite, plants.join('\n'))).status, 0);
        const pg = await fresh('postgres');
        assert.equal((await cli(['import'], pg, (await cli(['export'], lite)).stdout)).status, 0);
        const back = await fresh('sqlite');
        assert.equal((await cli(['import'], back, (await cli(['export'], pg)).stdout)).status, 0);
        assert.equal((await cli(['export'], back)).stdout, `${plants.join('\n')}\n`);
      });
    }
  });
}
