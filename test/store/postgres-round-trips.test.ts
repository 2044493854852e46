// A batch of plant writes on PostgreSQL is two round trips: BEGIN, the lock and the creations'
// insert in the first; the changes nobody reads back and the COMMIT in the second. Counted at the
// client: every query pg sends on the store's connections (those that set its schema; other
// suites share this process), over the commits the store made.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore, suiteOptions, type TestStore } from '../support/stores.js';

describe('round trips of a write batch [postgres]', suiteOptions('postgres'), () => {
  let db: TestStore;
  let store: Store;
  let queries = 0;
  const query = pg.Client.prototype.query;
  before(async () => {
    db = createTestStore('postgres');
    store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 4 })).store;
    const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
    // A connection's first query sets the store's search_path (its first statement alone, or
    // the first round trip of a transaction): from then on the connection is the store's.
    const ours = new WeakSet<pg.Client>();
    pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<pg.Client['query']>) {
      const [config] = args as unknown[];
      const text = typeof config === 'string' ? config : (config as { text?: string }).text;
      if (text?.includes(`search_path = "${schema}"`)) ours.add(this);
      if (ours.has(this)) queries++;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as pg.Client['query'];
  });
  after(async () => {
    pg.Client.prototype.query = query;
    await store?.close();
    await db?.drop();
  });

  /** Round trips per commit of these concurrent writes, and their outcomes. */
  async function perCommit(writes: Parameters<Store['plants']['write']>[0][]): Promise<[number, string[]]> {
    const { commits } = store.writeStats();
    queries = 0;
    const outcomes = await Promise.all(writes.map((w) => store.plants.write(w)));
    return [queries / (store.writeStats().commits - commits), outcomes.map((o) => o.kind)];
  }

  const ids = Array.from({ length: 30 }, (_, i) => BigInt(i + 1));

  it('two for creations, replaces and deletes; two with an event to write; a retry and a conflict change nothing', async () => {
    const created = await perCommit(ids.map((id) => ({ kind: 'create', plant: { id, name: `plant ${id}` } })));
    assert.deepEqual(created, [2, ids.map(() => 'created')]);

    const again = await perCommit(
      ids.map((id) => ({ kind: 'create', plant: { id, name: id === 1n ? 'other' : `plant ${id}` } })),
    );
    assert.deepEqual(again, [2, ids.map((id) => (id === 1n ? 'conflict' : 'unchanged'))]);

    const replaced = await perCommit(ids.map((id) => ({ kind: 'replace', plant: { id, name: `renamed ${id}` } })));
    assert.deepEqual(replaced, [2, ids.map(() => 'updated')]);

    await store.webhooks.insertEndpoint({
      id: 'ep_rt',
      url: 'http://127.0.0.1:9/hook',
      events: ['plant.deleted'],
      secret: 'whsec_AAAA',
      enabled: true,
      disabledReason: null,
      createdAt: new Date(),
    });
    const deleted = await perCommit(ids.map((id) => ({ kind: 'delete', id })));
    assert.deepEqual(deleted, [2, ids.map(() => 'deleted')]);
    assert.equal(await store.webhooks.countPendingDeliveries(), ids.length);
    assert.deepEqual(await store.plants.list({}, 10), []);
  });
});
