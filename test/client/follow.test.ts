// followChanges, the typed client's follower of the change log by JSON long polls: every change
// once, in position order, through failures of the network and of the server, until aborted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ChangesGoneError,
  FollowError,
  createPlantStoreClient,
  type PlantStoreClient,
} from '../../src/client/index.js';
import { conformingFetch } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { stores, suiteOptions } from '../support/stores.js';
import { FAST, logAfter, positionOf, take } from './follow-support.js';

const PAST_2_53 = 2n ** 53n + 1n;

for (const store of stores) {
  describe(`followChanges against a live server [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    let url: string;
    let client: PlantStoreClient;

    before(async () => {
      server = await buildTestApp({ store });
      url = await server.listen();
      client = createPlantStoreClient({ baseUrl: url, token: server.token, fetch: conformingFetch });
    });
    after(() => server.close());

    it('yields every change once, in position order, across pages, ids past 2^53 exact', async () => {
      const from = await positionOf(client);
      await client.POST('/plants', { body: { id: PAST_2_53, name: 'Pothos', tag: 'climber' } });
      for (let id = 1; id <= 120; id++) await client.POST('/plants', { body: { id, name: `Plant ${id}` } });
      await client.PATCH('/plants/{id}', { params: { path: { id: PAST_2_53 } }, body: { tag: null } });
      await client.DELETE('/plants/{id}', { params: { path: { id: 5 } } });

      // Pages of 50: three and a bit, each next one asked from the last position yielded.
      const got = await take({ client, after: from, limit: 50, wait: 1 }, 123);
      assert.deepEqual(got, await logAfter(client, from));
      assert.deepEqual(
        got.map((c) => [c.type, c.id]).filter((_, i) => i === 0 || i >= 121),
        [
          ['created', PAST_2_53],
          ['updated', PAST_2_53],
          ['deleted', 5],
        ],
      );
    });

    it('with onSnapshot, hands over the plants as of one position, then every change after it', async () => {
      const tagged = (n: number) => ({ id: 7000 + n, name: `Snap ${n}`, tag: 'snap' });
      for (let n = 0; n < 5; n++) await client.POST('/plants', { body: tagged(n) });
      const held = new Map<string, unknown>();
      let at: bigint | undefined;
      const following = take(
        {
          client,
          tag: ['snap'],
          wait: 1,
          onSnapshot: async (plants, position) => {
            for (const p of plants) held.set(String(p.id), p.plant);
            at = position;
            // Written after the snapshot: they come as changes, after its position.
            await client.PUT('/plants/{id}', {
              params: { path: { id: 7000 } },
              body: { name: 'Renamed', tag: 'snap' },
            });
            await client.DELETE('/plants/{id}', { params: { path: { id: 7001 } } });
          },
        },
        2,
      );
      const changes = await following;
      assert.deepEqual([...held.keys()], ['7000', '7001', '7002', '7003', '7004']);
      assert.deepEqual(held.get('7002'), tagged(2));
      assert.deepEqual(
        changes.map((c) => [c.type, c.id, BigInt(c.position) > at!]),
        [
          ['updated', 7000, true],
          ['deleted', 7001, true],
        ],
      );
    });

    it('waits for the next change, taking the Change-Position header as it comes', async () => {
      const head = await client.GET('/plants', { params: { query: { limit: 1 } } });
      const following = take({ client, after: head.response.headers.get('change-position')!, wait: 5 }, 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      await client.POST('/plants', { body: { id: 500, name: 'Late' } });
      const [change] = await following;
      assert.equal(change?.id, 500);
      assert.ok(Date.now() - started < 2000, 'the long poll answered when the change came');
    });

    it('resumes from the last position yielded after dropped connections, 5xx and cut bodies', async () => {
      const from = await positionOf(client);
      for (let id = 600; id < 603; id++) await client.POST('/plants', { body: { id, name: `Plant ${id}` } });
      let calls = 0;
      // Each poll's `after`, and the position of the last change yielded when it was sent.
      let last = String(from);
      const asked: [string, string][] = [];
      // Poll 2 fails to connect, poll 3 is a 502, poll 4's body is cut in the middle.
      const flaky = async (request: Request): Promise<Response> => {
        calls++;
        asked.push([new URL(request.url).searchParams.get('after')!, last]);
        if (calls === 2) throw new TypeError('fetch failed');
        if (calls === 3) return Response.json({ error: 502, message: 'bad gateway' }, { status: 502 });
        const response = await conformingFetch(request);
        if (calls !== 4) return response;
        const bytes = new Uint8Array(await response.arrayBuffer());
        const cut = new ReadableStream({
          start(controller) {
            controller.enqueue(bytes.subarray(0, bytes.length >> 1));
            controller.error(new TypeError('terminated'));
          },
        });
        return new Response(cut, { status: 200, headers: response.headers });
      };
      const flakyClient = createPlantStoreClient({ baseUrl: url, token: server.token, fetch: flaky });
      const retried: unknown[] = [];
      const got = await take(
        { client: flakyClient, after: from, wait: 2, ...FAST, onRetry: (e) => retried.push(e) },
        6,
        async (c) => {
          last = String(c.position);
          if (c.id === 602)
            for (let id = 603; id < 606; id++) await client.POST('/plants', { body: { id, name: `Plant ${id}` } });
        },
      );
      assert.deepEqual(got, await logAfter(client, from));
      assert.equal(retried.length, 3);
      // Every poll, the retries too, asked from the last change yielded, none from before it.
      assert.ok(asked.length >= 5);
      for (const [after, yielded] of asked) assert.equal(after, yielded);
    });

    it('asks on from where a filtered page says it looked, past the changes it did not match', async () => {
      const from = await positionOf(client);
      for (let id = 700; id < 703; id++)
        await client.POST('/plants', { body: { id, name: 'Other', tag: 'elsewhere' } });
      const passed = await positionOf(client);
      const asked: string[] = [];
      const recording = (request: Request) => {
        asked.push(new URL(request.url).searchParams.get('after')!);
        return conformingFetch(request);
      };
      const follower = createPlantStoreClient({ baseUrl: url, token: server.token, fetch: recording });
      const following = take({ client: follower, after: from, tag: ['wanted'], wait: 1 }, 1);
      while (asked.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
      await client.POST('/plants', { body: { id: 703, name: 'Wanted', tag: 'wanted' } });
      assert.deepEqual(
        (await following).map((c) => c.id),
        [703],
      );
      // The first poll waited and matched nothing; its Link said how far it had looked.
      assert.deepEqual(asked.slice(0, 2), [String(from), String(passed)]);
    });

    it('stops when the signal aborts, in a long poll or in a pause between retries', async () => {
      for (const [baseUrl, what] of [
        [url, 'a long poll'],
        ['http://127.0.0.1:9', 'a pause'],
      ] as const) {
        const stop = new AbortController();
        const follower = createPlantStoreClient({ baseUrl, token: server.token });
        const done = take({ client: follower, after: await positionOf(client), wait: 30, signal: stop.signal }, 1);
        await new Promise((resolve) => setTimeout(resolve, 300));
        const aborted = Date.now();
        stop.abort();
        assert.deepEqual(await done, [], what);
        assert.ok(Date.now() - aborted < 500, `${what} ended at once`);
      }
    });

    it('throws ChangesGoneError on 410 and FollowError on a refusal, without retrying', async () => {
      const ahead = (await positionOf(client)) + 1_000_000n;
      const retried: unknown[] = [];
      const gone = await take({ client, after: ahead, onRetry: (e) => retried.push(e) }, 1).catch((e: unknown) => e);
      assert.ok(gone instanceof ChangesGoneError);
      assert.equal(gone.after, ahead);
      assert.match(gone.message, /list the plants again/);
      const anonymous = createPlantStoreClient({ baseUrl: url });
      const refused = await take({ client: anonymous }, 1).catch((e: unknown) => e);
      assert.ok(refused instanceof FollowError);
      assert.equal(refused.status, 401);
      assert.deepEqual(retried, []);
    });
  });
}
