// The position a page of GET /plants carries is read before the page: a change that commits
// after the page was read (here, made by the store's list itself, right after it read its rows)
// is one the page does not show, so it must come after the page's position, where a client that
// follows the log from there finds it. Read after the page, the position would pass it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { listPlants } from '../../src/use-cases/read-plants.js';
import { createTestStore, stores, suiteOptions } from '../support/stores.js';

for (const kind of stores) {
  describe(`the position of a page of plants [${kind}]`, suiteOptions(kind), () => {
    const db = createTestStore(kind);
    let store: Store | undefined;
    after(async () => {
      await store?.close();
      await db.drop();
    });

    it('is before every change the page does not show', async () => {
      store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 2 })).store;
      const s = store;
      await s.plants.write({ kind: 'create', plant: { id: 1n, name: 'before' } });
      // A write that commits between the page's read and the answer.
      const racing = {
        changes: s.changes,
        plants: {
          ...s.plants,
          list: async (...args: Parameters<Store['plants']['list']>) => {
            const rows = await s.plants.list(...args);
            await s.plants.write({ kind: 'replace', plant: { id: 1n, name: 'after' } });
            return rows;
          },
        },
      };
      const page = await listPlants({ reads: async () => racing }, { limit: 10 });
      assert.deepEqual(
        page.plants.map((p) => p.name),
        ['before'],
      );
      const { current } = await s.changes.bounds();
      const followed = await s.changes.read(page.position, current, 10, {});
      assert.deepEqual(
        followed.changes.map((c) => [c.type, c.body]),
        [['updated', '{"id":1,"name":"after"}']],
        'following from the page position finds the change the page missed',
      );
    });
  });
}
