// The PostgreSQL store behind PgBouncer in transaction pooling mode, with one server connection
// for every client: two stores, each with a pool of its own, take turns on it transaction by
// transaction. A start-up parameter PgBouncer does not track (a statement time-out, `options`)
// would be refused at connection; a named prepared statement would exist on the server connection
// already when the other store's connection prepares it (or be missing, once a third client's
// transaction ran there); a session SET would leak into the other store's statements. None may.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { PgBouncer, skipWithoutPgBouncer } from '../support/pgbouncer.js';
import { postgresSql, POSTGRES_URL, suiteOptions } from '../support/stores.js';
import { storedEndpoint } from '../support/endpoint.js';

const options = { ...suiteOptions('postgres'), ...(skipWithoutPgBouncer && { skip: skipWithoutPgBouncer }) };

describe('the store behind PgBouncer in transaction mode, one server connection [postgres]', options, () => {
  // Two schemas, one per store: a statement run with the other's search_path would miss its rows.
  const schemas = [1, 2].map(() => `plant_store_test_${randomBytes(6).toString('hex')}`);
  let bouncer: PgBouncer;
  let stores: Store[] = [];

  before(async () => {
    const server = new URL(POSTGRES_URL);
    bouncer = await PgBouncer.start({
      server: { host: server.hostname, port: Number(server.port || 5432) },
      poolSize: 1,
    });
    const database = server.pathname.slice(1);
    stores = await Promise.all(
      schemas.map(
        async (schema) => (await openStore({ databaseUrl: bouncer.url(database, schema), databasePoolSize: 4 })).store,
      ),
    );
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await bouncer?.stop();
    for (const schema of schemas) await postgresSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  /** Every kind of statement a store sends, alone and in transactions, its results checked. */
  async function work(store: Store, n: number, mark: string): Promise<void> {
    const id = BigInt(n + 1);
    const name = `${mark} ${n}`;
    assert.equal((await store.plants.write({ kind: 'create', plant: { id, name, tag: mark } })).kind, 'created');
    assert.deepEqual(await store.plants.get(id), { id, name, tag: mark });
    assert.ok((await store.plants.list({ tags: [mark] }, 5)).length >= 1);
    assert.ok((await store.plants.list({ search: [mark] }, 5)).length >= 1);
    assert.equal((await store.plants.write({ kind: 'replace', plant: { id, name: `${name}b` } })).kind, 'updated');
    assert.equal((await store.plants.writeBatch([{ kind: 'delete', id }]))[0]!.kind, 'deleted');
    assert.equal(await store.plants.get(id), undefined);
    const { current } = await store.changes.bounds();
    assert.equal((await store.changes.read(current - 3n, current, 10, {})).changes.length, 3);
    const now = Date.now();
    await store.tokens.insert({
      id: `tok_${mark}_${n}`,
      name,
      hash: `${mark}-${n}`,
      prefix: '',
      scopes: ['plants:read'],
      createdAt: new Date(now),
      expiresAt: null,
      revokedAt: null,
    });
    assert.equal((await store.tokens.findByHash(`${mark}-${n}`))?.name, name);
    // A transaction of several round trips (the dispatcher's record of an attempt) and a lone
    // statement that binds numbers and arrays (its claim).
    await store.webhooks.redeliver({ eventId: `msg_${current}` }, now);
    await store.webhooks.claimDeliveries(now, now + 1000, new Map([[`ep_${mark}`, 2]]));
  }

  it('serves two stores, interleaving, with no error and no start-up parameter refused', async () => {
    await Promise.all(
      stores.map(async (store, s) => {
        const mark = `store${s}`;
        await store.webhooks.insertEndpoint(storedEndpoint(`ep_${mark}`));
        // Several at once on each store: its four connections wait for the one server connection.
        for (let round = 0; round < 5; round++) {
          await Promise.all(Array.from({ length: 4 }, (_, k) => work(store, round * 4 + k, mark)));
        }
      }),
    );
    for (const [s, store] of stores.entries()) {
      assert.equal(await store.tokens.count(), 20);
      assert.equal(await store.webhooks.countPendingDeliveries(), 20, `store${s}`);
    }
    const log = bouncer.log();
    assert.doesNotMatch(log, /unsupported startup parameter|prepared statement/i);
    assert.match(log, /login attempt: db=\S+ user=postgres/);
  });
});
