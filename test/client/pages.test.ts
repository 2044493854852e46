// allPlants, the client's walk over a listing: every plant once, in id order, each next page asked
// for exactly as the previous page's Link gave it (filters and cursor kept), until a page has none.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ListError, allPlants, createPlantStoreClient, type AllPlantsOptions } from '../../src/client/index.js';
import { conformingFetch } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { stores, suiteOptions } from '../support/stores.js';

const MAX = 2n ** 63n - 1n;
const PAST_2_53 = 2n ** 53n + 1n;

for (const store of stores) {
  describe(`allPlants against a live server [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    let url: string;
    // The query of every GET /plants, and the Link of every answer, in order.
    const asked: string[] = [];
    const positions: (string | null)[] = [];
    const links: (string | null)[] = [];
    const recording = async (request: Request) => {
      asked.push(new URL(request.url).search.slice(1));
      positions.push(request.headers.get('change-position'));
      const response = await conformingFetch(request);
      links.push(response.headers.get('link'));
      return response;
    };
    const walk = async (options: AllPlantsOptions, token = server.token) => {
      const client = createPlantStoreClient({ baseUrl: url, token, fetch: recording });
      const ids: (number | bigint)[] = [];
      for await (const plant of allPlants(client, options)) ids.push(plant.id);
      return ids;
    };

    before(async () => {
      server = await buildTestApp({ store });
      url = await server.listen();
      const client = createPlantStoreClient({ baseUrl: url, token: server.token });
      for (const [id, name, tag] of [
        [-5n, 'Monstera deliciosa', 'tropical'],
        [3n, 'Fern', 'shade'],
        [7n, 'Monstera adansonii', 'tropical'],
        [PAST_2_53, 'Monstera obliqua', 'climber'],
        [MAX, 'Monstera standleyana', 'tropical'],
      ] as const)
        await client.POST('/plants', { body: { id, name, tag } });
    });
    after(() => server.close());

    it('follows each Link as given, filters kept, ids exact past 2^53', async () => {
      asked.length = links.length = 0;
      const ids = await walk({ q: 'monstera', tag: ['tropical', 'climber'], limit: 2 });
      assert.deepEqual(ids, [-5, 7, PAST_2_53, MAX]);
      assert.ok(asked.length >= 2);
      // Every page after the first is the query of the Link before it, byte for byte.
      for (let i = 1; i < asked.length; i++) assert.equal(`</plants?${asked[i]}>; rel="next"`, links[i - 1]);
      assert.equal(links.at(-1), null);
    });

    it("asks for the later pages at the first page's Change-Position (docs/guides/following-the-store.md)", async () => {
      asked.length = positions.length = links.length = 0;
      const client = createPlantStoreClient({ baseUrl: url, token: server.token, fetch: recording });
      let first: string | null = null;
      const onPage = (response: Response) => void (first ??= response.headers.get('change-position'));
      let plants = 0;
      for await (const _ of allPlants(client, { limit: 2, onPage })) plants++;
      assert.equal(plants, 5);
      assert.ok(first !== null);
      assert.deepEqual(positions, [null, first, first]);
    });

    it('tells each page before its plants, the first with the listing Change-Position', async () => {
      const pages: string[] = [];
      const order: string[] = [];
      const client = createPlantStoreClient({ baseUrl: url, token: server.token });
      const onPage = (response: Response) => {
        pages.push(response.headers.get('change-position')!);
        order.push('page');
      };
      for await (const plant of allPlants(client, { limit: 3, onPage })) order.push(String(plant.id));
      assert.deepEqual(order, ['page', '-5', '3', '7', 'page', String(PAST_2_53), String(MAX)]);
      const first = await client.GET('/plants', { params: { query: { limit: 1 } } });
      assert.equal(pages[0], first.response.headers.get('change-position'));
    });

    it('starts after a given id (a walk resumed), bigint or number', async () => {
      assert.deepEqual(await walk({ after: 3, limit: 1 }), [7, PAST_2_53, MAX]);
      assert.deepEqual(await walk({ after: PAST_2_53, tag: ['tropical'] }), [MAX]);
      assert.deepEqual(await walk({ after: MAX }), []);
    });

    it('throws ListError with the status and message of a refused page', async () => {
      await assert.rejects(walk({}, 'pst_not-a-token'), (err: unknown) => {
        assert.ok(err instanceof ListError);
        assert.equal(err.status, 401);
        assert.match(err.message, /^listing the plants failed with 401: /);
        return true;
      });
      await assert.rejects(walk({ limit: 0 }), { name: 'ListError', status: 400 });
    });

    it('stops with the abort of its signal', async () => {
      const controller = new AbortController();
      controller.abort(new Error('enough'));
      await assert.rejects(walk({ signal: controller.signal }), /enough/);
    });
  });
}
