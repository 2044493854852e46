// The bare store of `npm run bench` (scripts/bench/bare-store-server.mjs) must make the writes it
// answers for, through the store, or its figures mean nothing: each write is read back from the
// store once the process has stopped. A process test: the benchmark runs it as a process.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startBareStore, type Running } from '../../scripts/bench/processes.js';
import { openStore } from '../../src/store/open-store.js';
import { createTestStore, stores, suiteOptions } from '../support/stores.js';

async function send(server: Running, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    ...(body !== undefined && { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

for (const kind of stores) {
  describe(`the bench's bare store on ${kind}`, suiteOptions(kind), () => {
    const store = createTestStore(kind);
    let server: Running | undefined;
    after(async () => {
      await server?.stop();
      await store.drop();
    });

    it('creates, renames and deletes plants in the store, answering as the baseline does', async () => {
      server = await startBareStore({ DATABASE_URL: store.databaseUrl });
      assert.deepEqual(await send(server, 'POST', '/plants', { id: 7, name: 'Monstera', tag: 'tropical' }), {
        status: 200,
        body: { name: 'Monstera', tag: 'tropical' },
      });
      assert.equal((await send(server, 'POST', '/plants', { id: 7, name: 'Other' })).status, 400);
      assert.deepEqual(await send(server, 'PUT', '/plants/7', { name: 'Renamed' }), {
        status: 200,
        body: { name: 'Renamed' },
      });
      assert.equal((await send(server, 'POST', '/plants', { id: 8, name: 'Fern' })).status, 200);
      assert.deepEqual(await send(server, 'DELETE', '/plants/8'), { status: 200, body: { name: 'Fern' } });
      await server.stop();

      const { store: opened } = await openStore({ databaseUrl: store.databaseUrl, databasePoolSize: 2 });
      try {
        assert.deepEqual(await opened.plants.get(7n), { id: 7n, name: 'Renamed' });
        assert.equal(await opened.plants.get(8n), undefined);
      } finally {
        await opened.close();
      }
    });
  });
}
