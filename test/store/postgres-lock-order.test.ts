// The write path's lock statement takes their locks in id order whatever plan PostgreSQL picks.
// Read by a sequential scan (a small table, or one the planner reads whole), rows come in the order
// they lie in the table, which updates change: two transactions locking overlapping plants took
// them in different orders and deadlocked, each deadlock held both connections for the server's
// deadlock_timeout (1 s) and ended in a 503; under overlapping load from two instances the waits
// took the whole pool. Shown here with the rows laid in descending id order and a sequential scan
// forced: while the highest id is held elsewhere, the statement holds the lower ones already.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/open-store.js';
import { SQL } from '../../src/store/postgres/plant-tx.js';
import type { Store } from '../../src/store/store.js';
import { pollUntil } from '../support/poll.js';
import { createTestStore, POSTGRES_URL, suiteOptions } from '../support/stores.js';

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

describe('the write path locks plants in id order [postgres]', suiteOptions('postgres'), () => {
  const db = createTestStore('postgres');
  const schema = new URL(db.databaseUrl).searchParams.get('schema')!;
  const table = `${pg.escapeIdentifier(schema)}.plants`;
  let store: Store;
  before(async () => {
    store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 2 })).store;
    // Created one by one, highest first: the table holds them in descending id order.
    for (const id of [3n, 2n, 1n]) await store.plants.write({ kind: 'create', plant: { id, name: `p${id}` } });
  });
  after(async () => {
    await store?.close();
    await db.drop();
  });

  for (const name of ['lock'] as const) {
    it(`SQL.${name}: holds plants 1 and 2 while it waits for plant 3`, async () => {
      const [holder, locker, probe] = await Promise.all([connect(), connect(), connect()]);
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT id FROM ${table} WHERE id = 3 FOR UPDATE`);
        await locker.query('BEGIN');
        // Inside the transaction: behind a transaction-mode pooler, its server connection's.
        const { rows: me } = await locker.query('SELECT pg_backend_pid() AS pid');
        const pid = (me[0] as { pid: number }).pid;
        await locker.query(`SET LOCAL search_path = ${pg.escapeIdentifier(schema)}`);
        await locker.query('SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off');
        const plan = await locker.query({ text: `EXPLAIN ${SQL[name].text}`, values: [['1', '2', '3']] });
        assert.match(plan.rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n'), /Seq Scan/);
        const locking = locker.query({ text: SQL[name].text, values: [['1', '2', '3']] });
        // Until the statement waits for plant 3's lock.
        assert.ok(
          await pollUntil(async () => {
            const { rows } = await probe.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
              [pid],
            );
            return (rows[0] as { n: number }).n > 0;
          }, 10_000),
          'the statement never waited for the held plant',
        );
        for (const id of [1, 2]) {
          await probe.query('BEGIN');
          const taken = await probe.query(`SELECT id FROM ${table} WHERE id = ${id} FOR UPDATE NOWAIT`).then(
            () => undefined,
            (err: { code?: string }) => err.code,
          );
          await probe.query('ROLLBACK');
          assert.equal(taken, '55P03', `plant ${id} is not held by the statement waiting for plant 3`);
        }
        await holder.query('ROLLBACK');
        await locking;
      } finally {
        await Promise.all([holder, locker, probe].map((c) => c.end().catch(() => undefined)));
      }
    });
  }
});
