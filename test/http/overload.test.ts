// Overload protection (503): past a bound on the store's write backlog or on the
// event loop's delay, requests get 503 with Retry-After at once; probes and metrics still
// answer; service resumes by itself. In process, so the triggers are deterministic: a store
// whose backlog the test sets, and an event loop the test blocks.
// SQLite only: both triggers are set by the test, so the store under them does not matter.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { registerOverloadGuard } from '../../src/http/plugins/overload.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { buildTestApp, type TestApp } from '../helper.js';
import type { RawResponse } from '../support/http.js';
import { newToken } from '../support/server.js';

/** Each POST a plant of its own. */
let lastId = 0;

function request(app: TestApp, method: string, url: string, token?: string): Promise<RawResponse> {
  return app.inject({
    method,
    path: url,
    headers: {
      ...(token && { authorization: `Bearer ${token}` }),
      ...(method === 'POST' && { 'content-type': 'application/json' }),
    },
    ...(method === 'POST' && { body: `{"id":${++lastId},"name":"busy"}` }),
  });
}

function assert503(r: RawResponse, message: RegExp): void {
  assert.equal(r.status, 503, r.text);
  assert.equal(r.headers['retry-after'], '1');
  assert.equal((r.json as { error: number }).error, 503);
  assert.match((r.json as { message: string }).message, message);
}

async function eventually(check: () => Promise<boolean>, tries = 50): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}

describe('overload protection', () => {
  let dir: string;
  let store: SqliteStore;
  const token = newToken();
  let backlog = 0;
  const apps: TestApp[] = [];

  // Each trigger gets its own app with only its own bound on, so a machine made slow by other
  // work cannot trip the other bound and answer for the wrong reason.
  async function guardedApp(bounds: Record<string, string>): Promise<TestApp> {
    const app = await buildTestApp({
      databaseUrl: `sqlite:${join(dir, 'store.db')}`,
      storeObject: store,
      token,
      env: { MAX_WRITE_BACKLOG: '0', MAX_EVENT_LOOP_DELAY_MS: '0', ...bounds },
    });
    apps.push(app);
    return app;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-overload-'));
    store = new SqliteStore(join(dir, 'store.db'));
    await store.migrate();
    // The real store, with its backlog under the test's control.
    store.pendingWrites = () => backlog;
  });
  after(async () => {
    for (const app of apps) await app.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After while the store is behind on writes, then resumes', async () => {
    const app = await guardedApp({ MAX_WRITE_BACKLOG: '100' });
    assert.equal((await request(app, 'POST', '/plants', token)).status, 200);
    backlog = 101;
    assert.ok(await eventually(async () => (await request(app, 'GET', '/plants', token)).status === 503));
    assert503(await request(app, 'POST', '/plants', token), /the store is behind on writes/);
    assert503(await request(app, 'GET', '/plants'), /behind/); // before the credential is looked at
    assert503(await request(app, 'GET', '/openapi.json'), /behind/);
    // Probes and metrics keep answering.
    assert.equal((await request(app, 'GET', '/healthz')).status, 200);
    assert.equal((await request(app, 'GET', '/readyz')).status, 200);
    const metrics = await request(app, 'GET', '/metrics', token);
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /plant_store_overload_rejections_total\{reason="write_backlog"\} [1-9]/);
    // Unknown paths are still 404: routing comes first.
    assert.equal((await request(app, 'GET', '/nope')).status, 404);

    backlog = 100;
    assert.ok(await eventually(async () => (await request(app, 'POST', '/plants', token)).status === 200));
  });

  it("does not count start-up's own work as delay: a start that held the loop 1.5 s answers at once", async () => {
    const app = Fastify();
    await registerOverloadGuard(app, loadConfig({ MAX_EVENT_LOOP_DELAY_MS: '500', MAX_WRITE_BACKLOG: '0' }), store);
    app.get('/work', async () => 'done');
    // Start-up after the guard began sampling (on a busy machine, compiling the contract's schemas
    // and opening the store): the loop held for 1.5 s before ready.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
    await app.ready();
    await sleep(20); // let the overdue sample run: a mean delay of about 1.5 s
    const r = await app.inject('/work');
    await app.close();
    assert.equal(r.statusCode, 200, r.body);
  });

  it('answers 503 with Retry-After after the event loop fell behind, then resumes', async () => {
    // 500 ms: far above what a busy machine adds to the mean delay, far below a 3 s block.
    const app = await guardedApp({ MAX_EVENT_LOOP_DELAY_MS: '500' });
    // Block this process's event loop for 3 s: the next one-second sample sees a mean delay
    // far past the bound, whatever the ticks before it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
    await sleep(20); // let the overdue sample run
    assert503(await request(app, 'GET', '/plants', token), /the server is overloaded/);
    assert.equal((await request(app, 'GET', '/healthz')).status, 200);
    assert.ok(await eventually(async () => (await request(app, 'GET', '/plants', token)).status === 200));
  });
});
