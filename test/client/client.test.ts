import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPlantStoreClient, type BatchOperation, type PlantStoreClient } from '../../src/client/index.js';
import { conformingFetch } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { stores, suiteOptions } from '../support/stores.js';

const MAX = 2n ** 63n - 1n;
const PAST_2_53 = 2n ** 53n + 1n;

for (const store of stores) {
  describe(`the typed client (plant-store/client) against a live server [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    let url: string;
    let client: PlantStoreClient;

    before(async () => {
      server = await buildTestApp({ store });
      // The client speaks to a real socket, through fetch, as a user's code would.
      url = await server.listen();
      // conformingFetch checks every response against the document, as send() does.
      client = createPlantStoreClient({ baseUrl: url, token: server.token, fetch: conformingFetch });
    });
    after(() => server.close());

    it('creates and reads back plants, ids past 2^53 exact as bigint', async () => {
      for (const [id, name, tag] of [
        [MAX, 'Monstera', 'tropical'],
        [PAST_2_53, 'Pothos', undefined],
      ] as const) {
        const created = await client.POST('/plants', { body: { id, name, ...(tag !== undefined && { tag }) } });
        assert.equal(created.response.status, 200);
        assert.deepEqual(created.data, { name, ...(tag !== undefined && { tag }) });

        const read = await client.GET('/plants/{id}', { params: { path: { id } } });
        assert.deepEqual(read.data, { id, name, ...(tag !== undefined && { tag }) });
        assert.equal(typeof read.data?.id, 'bigint');
      }
    });

    it('writes a batch, typed, ids past 2^53 exact; a failing batch is the error of its operation', async () => {
      const operations: BatchOperation[] = [
        { op: 'create', plant: { id: MAX - 1n, name: 'Ivy' } },
        { op: 'patch', id: MAX - 1n, patch: { tag: 'climber' } },
        { op: 'delete', id: MAX - 1n, ifMatch: '*' },
      ];
      const done = await client.POST('/plants/batch', { body: { operations } });
      assert.equal(done.response.status, 200);
      assert.deepEqual(
        // The result's type is split by status: a 200 has its plant, a 204 none (the type says so).
        done.data?.results.map((r) => (r.status === 200 ? [r.status, r.plant] : [r.status, undefined])),
        [
          [200, { name: 'Ivy' }],
          [200, { name: 'Ivy', tag: 'climber' }],
          [204, undefined],
        ],
      );
      const refused = await client.POST('/plants/batch', { body: { operations: [{ op: 'delete', id: MAX - 1n }] } });
      assert.equal(refused.response.status, 404);
      assert.equal(refused.error?.message, `operations[0]: plant ${MAX - 1n} does not exist`);
    });

    it('reads small ids as numbers, lists a page with its Link, replaces and deletes', async () => {
      assert.equal((await client.POST('/plants', { body: { id: 7, name: 'Fern' } })).response.status, 200);

      const page = await client.GET('/plants', { params: { query: { limit: 1, after: 6 } } });
      assert.deepEqual(page.data, [{ id: 7, name: 'Fern' }]);
      assert.equal(page.response.headers.get('link'), `</plants?limit=1&after=7>; rel="next"`);

      const replaced = await client.PUT('/plants/{id}', {
        params: { path: { id: 7 } },
        body: { name: 'Maidenhair fern' },
      });
      assert.deepEqual(replaced.data, { name: 'Maidenhair fern' });

      const deleted = await client.DELETE('/plants/{id}', { params: { path: { id: 7 } } });
      assert.equal(deleted.response.status, 204);
      assert.equal(deleted.data, undefined);
      const gone = await client.GET('/plants/{id}', { params: { path: { id: 7 } } });
      assert.equal(gone.response.status, 404);
      assert.equal(gone.error?.error, 404);
    });

    it('filters by tag and words, patches with If-Match, and keeps a copy with If-None-Match', async () => {
      for (const [id, name, tag] of [
        [20, 'Monstera deliciosa', 'tropical'],
        [21, 'Café au lait ivy', 'climber'],
        [22, 'Monstera adansonii', 'tropical'],
      ] as const)
        await client.POST('/plants', { body: { id, name, tag } });
      const tropical = await client.GET('/plants', { params: { query: { tag: ['tropical'], limit: 1 } } });
      assert.deepEqual(tropical.data, [{ id: 20, name: 'Monstera deliciosa', tag: 'tropical' }]);
      assert.equal(tropical.response.headers.get('link'), '</plants?limit=1&tag=tropical&after=20>; rel="next"');
      const found = await client.GET('/plants', { params: { query: { q: 'cafe', tag: ['climber', 'none'] } } });
      assert.deepEqual(found.data, [{ id: 21, name: 'Café au lait ivy', tag: 'climber' }]);

      const read = await client.GET('/plants/{id}', { params: { path: { id: 22 } } });
      const etag = read.response.headers.get('etag')!;
      const kept = await client.GET('/plants/{id}', {
        params: { path: { id: 22 }, header: { 'If-None-Match': etag } },
      });
      assert.equal(kept.response.status, 304);
      // The client sends PATCH bodies as application/merge-patch+json by itself.
      const patched = await client.PATCH('/plants/{id}', {
        params: { path: { id: 22 }, header: { 'If-Match': etag } },
        body: { tag: null },
      });
      assert.deepEqual(patched.data, { name: 'Monstera adansonii' });
      const stale = await client.PATCH('/plants/{id}', {
        params: { path: { id: 22 }, header: { 'If-Match': etag } },
        body: { name: 'lost update' },
      });
      assert.equal(stale.response.status, 412);
      assert.equal(stale.error?.error, 412);
    });

    it('returns the Error body of a refused call, typed', async () => {
      const anonymous = createPlantStoreClient({ baseUrl: url, fetch: conformingFetch });
      const refused = await anonymous.POST('/plants', { body: { id: 1, name: 'Monstera' } });
      assert.equal(refused.response.status, 401);
      assert.equal(refused.data, undefined);
      const message: string | undefined = refused.error?.message;
      assert.equal(refused.error?.error, 401);
      assert.match(message ?? '', /token|credential/i);

      const conflict = await client.POST('/plants', { body: { id: MAX, name: 'Not a Monstera' } });
      assert.equal(conflict.response.status, 409);
      assert.equal(conflict.error?.error, 409);
    });

    it('is what the package exports as plant-store/client', async () => {
      const resolved = import.meta.resolve('plant-store/client');
      assert.match(resolved, /\/dist\/client\/index\.js$/);
      const exported = (await import(resolved)) as Record<string, unknown>;
      assert.equal(typeof exported.createPlantStoreClient, 'function');
      assert.equal(import.meta.resolve('plant-store'), resolved);
    });
  });
}
