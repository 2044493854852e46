// docs/guides/scaling-out.md promises that a request needing PostgreSQL is answered within 5 s when the database stops
// answering. A lock on `plants` held elsewhere (a long migration, an operator's LOCK TABLE) is
// that case for every plant operation: each request, whenever it comes while the lock is held,
// is answered 503 within 5 s of its own arrival, waiting behind others included; once the lock
// goes, the same requests succeed.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { buildTestApp, type TestApp } from '../helper.js';
import { send, type RawRequest } from '../support/http.js';
import { POSTGRES_URL, suiteOptions } from '../support/stores.js';

describe('a lock on plants held elsewhere (PostgreSQL)', suiteOptions('postgres'), () => {
  let server: TestApp;
  let locker: pg.Client;
  before(async () => {
    // A small pool, so that reads the lock holds take every connection, as a busier instance's would.
    server = await buildTestApp({ store: 'postgres', env: { DATABASE_POOL_SIZE: '4' } });
    locker = new pg.Client({ connectionString: POSTGRES_URL });
    await locker.connect();
  });
  after(async () => {
    await locker?.end();
    await server?.close();
  });

  it('every request, whenever it comes, is answered 503 within 5 s of its arrival; then served', async () => {
    const auth = { authorization: `Bearer ${server.token}` };
    const json = { ...auth, 'content-type': 'application/json' };
    for (const id of [1, 2, 3]) {
      const r = await send(server, { method: 'POST', path: '/plants', headers: json, body: `{"id":${id},"name":"p"}` });
      assert.equal(r.status, 200);
    }
    const requests = (i: number): RawRequest[] => [
      { method: 'POST', path: '/plants', headers: json, body: `{"id":${100 + i},"name":"new"}` },
      { method: 'PUT', path: `/plants/${1 + (i % 3)}`, headers: json, body: `{"name":"renamed ${i}"}` },
      { path: `/plants/${1 + (i % 3)}`, headers: auth },
      { path: '/plants?limit=5', headers: auth },
      { path: '/plants?q=renamed', headers: auth },
    ];
    const schema = new URL(server.databaseUrl).searchParams.get('schema');
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${schema}".plants IN ACCESS EXCLUSIVE MODE`);
    const timed: Promise<{ what: string; status: number; ms: number }>[] = [];
    try {
      // A request every 100 ms for 6 s, one kind after the other: the later ones queue behind
      // batches the lock holds up, and wait for connections that blocked reads hold, and the
      // token's cached look-up expires on the way (a read of its own).
      for (let i = 0; i < 60; i++) {
        if (i > 0) await sleep(100);
        const req = requests(i)[i % 5]!;
        const sent = Date.now();
        timed.push(
          send(server, req).then((r) => ({
            what: `${req.method ?? 'GET'} ${req.path} (at ${i * 100} ms)`,
            status: r.status,
            ms: Date.now() - sent,
          })),
        );
      }
      const answers = await Promise.all(timed);
      for (const a of answers) {
        assert.equal(a.status, 503, a.what);
        // 5 s is the promise: the token's look-up and the operation share it.
        assert.ok(a.ms < 5000, `${a.what} was answered after ${a.ms} ms`);
      }
    } finally {
      await locker.query('ROLLBACK');
    }
    for (const req of requests(60)) assert.equal((await send(server, req)).status, 200, req.path);
  });
});
