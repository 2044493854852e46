// The dispatcher's two statements on PostgreSQL read about one index entry per pending delivery,
// however many are pending and whatever PostgreSQL knows of the table: here it knows nothing (no
// ANALYZE yet, as within a minute of a new store or on a promoted standby), the case in which
// its choice of index once made each look read every pending delivery of the endpoint for each
// one (half a second a look with 3,000 pending: the failover test's dispatcher fell behind), and
// in which, guessing 170 enabled endpoints where there is one, it answered "which endpoints have
// a delivery due" by reading every due delivery at once (200,000 buffers, 0.3 s a look with
// 50,000 pending, the backlog a few seconds of batches leave). Counted in buffers that EXPLAIN
// ANALYZE reports, not in time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { plantRecord } from '../../src/domain/plant.js';
import { openStore } from '../../src/store/open-store.js';
import { postgresOutbox } from '../../src/store/postgres/outbox.js';
import type { Run } from '../../src/store/postgres/rows.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore, POSTGRES_URL, suiteOptions, type TestStore } from '../support/stores.js';
import { storedEndpoint } from '../support/endpoint.js';

const PENDING = 50_000;
const LEASED = 2_400;
const ENDPOINT = 'ep_AAAAAAAAAAAAAAAA';
/** Reading every due delivery, each one's order check included, is about 200,000. */
const MOST_BUFFERS = 20_000;

interface PlanNode {
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
}

describe('the dispatcher’s statements on a table PostgreSQL has no statistics of', suiteOptions('postgres'), () => {
  let db: TestStore;
  let store: Store;
  let client: pg.Client;
  const buffers: number[] = [];
  /** Runs each statement under EXPLAIN ANALYZE: its rows are lost, its buffers counted. */
  const explained: Run = async (query) => {
    const rows = await sql(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query.text}`, query.values);
    const plan = (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan;
    buffers.push(plan['Shared Hit Blocks'] + plan['Shared Read Blocks']);
    return [];
  };
  const outbox = () => postgresOutbox(explained, (work) => work(explained));
  let schema: string;
  /** One statement in the store's schema, in a transaction of its own: behind PgBouncer no session holds a search_path. */
  const sql = async (text: string, values?: unknown[]) => {
    await client.query(`BEGIN; SET LOCAL search_path = ${schema}`);
    try {
      const { rows } = await client.query({ text, values });
      await client.query('COMMIT');
      return rows as Record<string, unknown>[];
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  };

  before(async () => {
    db = createTestStore('postgres');
    store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 2 })).store;
    schema = new URL(db.databaseUrl).searchParams.get('schema')!;
    client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    // No ANALYZE may come, whatever the time the test takes.
    await sql(`ALTER TABLE deliveries SET (autovacuum_enabled = false);
                        ALTER TABLE changes SET (autovacuum_enabled = false);
                        ALTER TABLE webhook_endpoints SET (autovacuum_enabled = false)`);
    await store.webhooks.insertEndpoint(storedEndpoint(ENDPOINT));
    for (let first = 1; first <= PENDING; first += 1_000) {
      const ids = Array.from({ length: Math.min(1_000, PENDING - first + 1) }, (_, i) => BigInt(first + i));
      await store.plants.writeAll(
        ids.map((id) => ({ kind: 'create' as const, plant: plantRecord(id, `p${id}`, undefined) })),
      );
    }
    // Many are being sent (leased): a look goes past them to the first it may claim.
    await sql(
      `UPDATE deliveries SET locked_until = 9000000000000000
       WHERE event_seq IN (SELECT event_seq FROM deliveries ORDER BY event_seq LIMIT ${LEASED})`,
    );
    const [{ n, analyzed }] = (await sql(
      `SELECT (SELECT count(*) FROM deliveries WHERE state = 'pending')::int AS n,
              (SELECT last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL FROM pg_stat_user_tables
                WHERE relid = 'deliveries'::regclass) AS analyzed`,
    )) as [{ n: number; analyzed: boolean }];
    assert.deepEqual([n, analyzed], [PENDING, false]);
  });
  after(async () => {
    await client?.end();
    await store?.close();
    await db?.drop();
  });

  it('which endpoints have a delivery due: up to the first it may claim, never every due delivery', async () => {
    buffers.length = 0;
    await outbox().endpointsDue(Date.now());
    assert.equal(buffers.length, 1);
    assert.ok(buffers[0]! < MOST_BUFFERS, `read ${buffers[0]} buffers for ${PENDING} pending deliveries`);
  });

  it('claiming 16: about an index entry a delivery, and the 16 it may claim are claimed', async () => {
    buffers.length = 0;
    await outbox().claimDeliveries(Date.now(), Date.now() + 60_000, new Map([[ENDPOINT, 16]]));
    assert.ok(buffers[0]! < MOST_BUFFERS, `read ${buffers[0]} buffers for ${PENDING} pending deliveries`);
    const [claimed] = await sql(
      `SELECT count(*)::int AS n FROM deliveries WHERE locked_until IS NOT NULL AND locked_until < 9000000000000000`,
    );
    assert.equal(claimed!.n, 16);
  });
});
