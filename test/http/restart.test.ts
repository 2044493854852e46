// What a restart keeps, on every store, in-process: the app is closed and built again on the same
// store, as `plant-store serve` stopping and starting does (the same services, the same bootstrap
// token step). Plants persist exactly (int64 ids at both ends, an empty tag, identical retries
// still 200, conflicts still 409), and a revoked PLANT_STORE_TOKEN stays revoked when the service
// starts again with the same value. The process itself (its first-start token on stderr, its
// signals, a SIGKILL under load) is lifecycle.test.ts's. These moved here from there: a process
// per start showed nothing more.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { buildTestApp } from '../helper.js';
import { cli } from '../support/cli.js';
import { readStoredPlantsAt } from '../support/db.js';
import { postPlant } from '../support/http.js';
import { createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

for (const kind of stores) {
  describe(`a restart [${kind}]`, suiteOptions(kind), () => {
    const created: TestStore[] = [];
    after(() => Promise.all(created.map((s) => s.drop())));
    const fresh = () => {
      const s = createTestStore(kind);
      created.push(s);
      return s.databaseUrl;
    };

    it('keeps the plants exactly across a clean stop and start', async () => {
      const databaseUrl = fresh();
      const a = await buildTestApp({ databaseUrl });
      const bodies = [
        '{"id":9223372036854775807,"name":"max","tag":"edge"}',
        '{"id":-9223372036854775808,"name":"min"}',
        '{"id":7,"name":"🌿","tag":""}',
      ];
      for (const b of bodies) assert.equal((await postPlant(a, a.token, b)).status, 200);
      await a.close();

      const b = await buildTestApp({ databaseUrl, token: a.token });
      try {
        for (const body of bodies) {
          const r = await postPlant(b, b.token, body);
          assert.equal(r.status, 200, `identical retry after restart: ${r.text}`);
        }
        assert.equal((await postPlant(b, b.token, '{"id":7,"name":"🌿"}')).status, 409);
        assert.equal(
          (await postPlant(b, b.token, '{"id":9223372036854775807,"name":"other","tag":"edge"}')).status,
          409,
        );
      } finally {
        await b.close();
      }
      assert.deepEqual(await readStoredPlantsAt(databaseUrl), [
        { id: -9223372036854775808n, name: 'min', tag: null },
        { id: 7n, name: '🌿', tag: '' },
        { id: 9223372036854775807n, name: 'max', tag: 'edge' },
      ]);
    });

    it('keeps a revoked PLANT_STORE_TOKEN revoked when started again with the same value', async () => {
      const databaseUrl = fresh();
      const a = await buildTestApp({ databaseUrl });
      assert.equal((await postPlant(a, a.token, '{"id":1,"name":"x"}')).status, 200);
      const list = await cli(['token', 'list', '--json'], { DATABASE_URL: databaseUrl });
      const ids = (JSON.parse(list.stdout) as { id: string }[]).map((t) => t.id);
      assert.equal(ids.length, 1, list.stdout);
      assert.equal((await cli(['token', 'revoke', ids[0]!], { DATABASE_URL: databaseUrl })).status, 0);
      await a.close();

      const b = await buildTestApp({ databaseUrl, token: a.token });
      try {
        assert.equal((await postPlant(b, b.token, '{"id":2,"name":"x"}')).status, 401);
        assert.equal(await b.services.store.tokens.count(), 1, 'no token was registered or generated instead');
      } finally {
        await b.close();
      }
    });
  });
}
