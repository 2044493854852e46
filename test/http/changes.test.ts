// GET /plants/changes as a client uses it, on both stores, every response checked against the
// document: pages in position order with their Link, a change per effective write and none for
// one that changes nothing, Change-Position on writes and lists, list then follow converging to
// the store's plants under concurrent writes, the tag and id filters (a plant leaving its tag is
// shown leaving), long polls, and 410 for positions the log cannot follow from.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helper.js';
import { readJson } from '../../src/json/read-json.js';
import { requests } from '../support/changes.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const kind of stores) {
  describe(`GET /plants/changes [${kind}]`, suiteOptions(kind), () => {
    const t = useTestApp({ store: kind });

    it('logs each effective write once, in position order; Change-Position names it', async () => {
      const { write, position, changes } = requests(t.app);
      const start = position(await t.app.inject({ path: '/plants', headers: requests(t.app).auth }));
      const created = await write('POST', '/plants', { id: 1, name: 'Fern', tag: 'green' });
      const retried = await write('POST', '/plants', { id: 1, name: 'Fern', tag: 'green' });
      assert.equal(position(retried), position(created), 'a retry changes nothing: the current position');
      const same = await write('PUT', '/plants/1', { name: 'Fern', tag: 'green' });
      assert.equal(position(same), position(created));
      const patched = await write('PATCH', '/plants/1', { tag: null }, 'application/merge-patch+json');
      const deleted = await write('DELETE', '/plants/1');
      assert.equal(deleted.status, 204);
      assert.ok(position(created) > start && position(patched) > position(created));
      assert.ok(position(deleted) > position(patched));

      const { res, list } = await changes(`?after=${start}`);
      assert.equal(res.status, 200);
      assert.deepEqual(
        list.map((c) => [BigInt(c.position), c.type, Number(c.id), c.plant && { ...c.plant }]),
        [
          [position(created), 'created', 1, { id: 1, name: 'Fern', tag: 'green' }],
          [position(patched), 'updated', 1, { id: 1, name: 'Fern' }],
          [position(deleted), 'deleted', 1, undefined],
        ],
      );
      assert.ok(list.every((c) => !Number.isNaN(Date.parse(c.time))));
      assert.equal(res.headers.link, undefined, 'nothing more follows');
    });

    it('pages with Link, keeping the filters; an int64 id past 2^53 stays exact', async () => {
      const { write, position, changes } = requests(t.app);
      const start = position(await write('POST', '/plants', { id: 100, name: 'start' }));
      for (let i = 0; i < 5; i++) {
        const id = 9_007_199_254_740_993n + BigInt(i);
        await t.app.inject({
          method: 'POST',
          path: '/plants',
          headers: { ...requests(t.app).auth, 'content-type': 'application/json' },
          body: `{"id":${id},"name":"big ${i}"}`,
        });
      }
      const first = await changes(`?after=${start}&limit=2`);
      assert.equal(first.list.length, 2);
      const next = /^<([^>]+)>; rel="next"$/.exec(String(first.res.headers.link))?.[1];
      assert.equal(next, `/plants/changes?limit=2&after=${String(first.list[1]!.position)}`);
      assert.match(first.res.text, /"id":9007199254740993,/);
      const rest = await changes(`?after=${String(first.list[1]!.position)}`);
      assert.equal(rest.list.length, 3);
    });

    it('tag keeps the changes of plants that had it before or after; id keeps one history', async () => {
      const { write, position, changes } = requests(t.app);
      const start = position(await write('POST', '/plants', { id: 200, name: 'a', tag: 'red' }));
      await write('POST', '/plants', { id: 201, name: 'b', tag: 'blue' });
      await write('PATCH', '/plants/200', { tag: 'blue' }, 'application/merge-patch+json');
      await write('PATCH', '/plants/201', { name: 'b2' }, 'application/merge-patch+json');
      await write('DELETE', '/plants/200');
      const red = await changes(`?after=${start - 1n}&tag=red`);
      assert.deepEqual(
        red.list.map((c) => [Number(c.id), c.type, c.plant?.tag]),
        [
          [200, 'created', 'red'],
          [200, 'updated', 'blue'],
        ],
        'the plant is shown leaving the tag',
      );
      const blue = await changes(`?after=${start - 1n}&tag=blue&tag=none`);
      assert.deepEqual(
        blue.list.map((c) => [Number(c.id), c.type]),
        [
          [201, 'created'],
          [200, 'updated'],
          [201, 'updated'],
          [200, 'deleted'],
        ],
      );
      const one = await changes(`?after=${start - 1n}&id=201`);
      assert.deepEqual(
        one.list.map((c) => c.type),
        ['created', 'updated'],
      );
      assert.equal((await changes('?id=1&tag=a')).res.status, 400);
    });

    it('a long poll answers when a change comes, and [] when none comes in time', async () => {
      const { write, position, changes } = requests(t.app);
      const at = position(await write('POST', '/plants', { id: 300, name: 'x' }));
      const started = Date.now();
      const waiting = changes(`?after=${at}&wait=5`);
      setTimeout(() => void write('POST', '/plants', { id: 301, name: 'y' }), 200);
      const { list } = await waiting;
      assert.deepEqual(
        list.map((c) => Number(c.id)),
        [301],
      );
      assert.ok(Date.now() - started < 3000, 'answered when the change came');
      const empty = Date.now();
      const none = await changes(`?after=${BigInt(String(list[0]!.position))}&wait=1`);
      assert.deepEqual(none.list, []);
      assert.ok(Date.now() - empty >= 900, 'waited its second');
    });

    it('a page says how far it looked (Change-Position): a filtered one that found nothing moves its reader on', async () => {
      const { write, position, changes } = requests(t.app);
      const at = position(await write('POST', '/plants', { id: 420, name: 'x', tag: 'common' }));
      let last = at;
      for (let id = 421; id < 425; id++)
        last = position(await write('POST', '/plants', { id, name: 'x', tag: 'common' }));
      const rare = await changes(`?after=${at}&tag=rare`);
      assert.deepEqual(rare.list, []);
      assert.equal(position(rare.res), last, 'looked up to the last change');
      const common = await changes(`?after=${at}&tag=common&limit=2`);
      assert.equal(common.list.length, 2);
      assert.equal(
        position(common.res),
        BigInt(String(common.list[1]!.position)),
        'a full page looked up to its last change',
      );
      // Following on from where it looked, nothing is read twice and nothing is missed.
      const next = position(await write('POST', '/plants', { id: 425, name: 'x', tag: 'rare' }));
      const after = await changes(`?after=${position(rare.res)}&tag=rare`);
      assert.deepEqual(
        after.list.map((c) => BigInt(String(c.position))),
        [next],
      );
    });

    it('list, then follow: paging from the first page position and applying the changes gives the store', async () => {
      const { auth, write, changes } = requests(t.app);
      for (let id = 500; id < 540; id++) await write('POST', '/plants', { id, name: `n${id}`, tag: 'a' });
      // Writes to the first page's plants until it is answered: the changes that
      // land between its read and its position are the ones a wrong position would lose.
      let stopAt = Infinity;
      const writer = (async () => {
        for (let n = 0; Date.now() < stopAt; n++) {
          const id = 500 + (n % 5);
          const pick = n % 3;
          if (pick === 0) await write('POST', '/plants', { id, name: `n${id}`, tag: 'a' });
          else if (pick === 1) await write('PATCH', `/plants/${id}`, { name: `r${n}` }, 'application/merge-patch+json');
          else await write('DELETE', `/plants/${id}`);
        }
      })();
      await new Promise((r) => setTimeout(r, 20));
      const mirror = new Map<string, string>();
      let next: string | undefined = '/plants?limit=5&after=499';
      let from: string | undefined;
      while (next) {
        const page = await t.app.inject({ path: next, headers: auth });
        if (from === undefined) {
          from = String(page.headers['change-position']);
          stopAt = Date.now();
        }
        for (const p of readJson(page.text) as { id: number; name: string; tag?: string }[]) {
          if (p.id < 550) mirror.set(String(p.id), JSON.stringify(p));
        }
        next = /^<([^>]+)>; rel="next"$/.exec(String(page.headers.link ?? ''))?.[1];
      }
      await writer;
      for (let after = from!, more = true; more;) {
        const { res, list } = await changes(`?after=${after}&limit=1000`);
        for (const c of list) {
          if (c.type === 'deleted') mirror.delete(String(c.id));
          else mirror.set(String(c.id), JSON.stringify(c.plant));
          after = String(c.position);
        }
        more = res.headers.link !== undefined;
      }
      const stored = await t.app.inject({ path: '/plants?limit=1000&after=499', headers: auth });
      const now = (readJson(stored.text) as { id: number }[]).filter((p) => p.id < 550);
      assert.deepEqual(
        [...mirror.entries()].sort(([a], [b]) => Number(a) - Number(b)).map(([, p]) => p),
        now.map((p) => JSON.stringify(p)),
      );
    });

    it("reads carrying a write's Change-Position show it (one database here); other values are 400", async () => {
      const { auth, write, position } = requests(t.app);
      const at = position(await write('POST', '/plants', { id: 7001, name: 'read your write' }));
      const read = (path: string, value: string) =>
        t.app.inject({ path, headers: { ...auth, 'change-position': value } });
      assert.equal((await read('/plants/7001', String(at))).status, 200);
      const page = await read('/plants?after=7000&limit=1', String(at));
      assert.equal(page.text, '[{"id":7001,"name":"read your write"}]');
      assert.ok(position(page) >= at);
      const feed = await read(`/plants/changes?after=${at - 1n}`, String(at));
      assert.equal(BigInt((readJson(feed.text) as { position: bigint | number }[])[0]!.position), at);
      // A position past the log's end is no standby's: the primary answers, as it is.
      assert.equal((await read('/plants/7001', String(at + 1000n))).status, 200);
      for (const value of ['abc', '-1', '1.5', '99999999999999999999', '']) {
        for (const path of ['/plants/7001', '/plants', '/plants/changes']) {
          const res = await read(path, value);
          assert.equal(res.status, 400, `${path} ${value}`);
          assert.match(String((res.json as { message: string }).message), /^change-position must match/);
        }
      }
      // 19 digits the pattern lets through, past int64: no position, as ?after= says of it.
      for (const path of ['/plants/7001', '/plants', '/plants/changes']) {
        const res = await read(path, '9223372036854775808');
        assert.equal(res.status, 400, path);
        assert.equal((res.json as { message: string }).message, 'change-position must be at most 9223372036854775807');
      }
    });

    it('410 for a position older than the oldest kept, past the current one, or pruned', async () => {
      const { write, position, changes } = requests(t.app);
      const at = position(await write('POST', '/plants', { id: 400, name: 'x' }));
      for (const after of ['0', String(at + 1000n)]) {
        const { res } = await changes(`?after=${after}`);
        assert.equal(res.status, 410, after);
        assert.match(String((res.json as { message: string }).message), /list the plants again/);
      }
      // Past the retention: everything made before now goes, and the floor rises past it.
      await t.app.services.store.changes.prune(Date.now() + 1000);
      // As another instance's prune would be: this one sees the new floor at its next look.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal((await changes(`?after=${at - 1n}`)).res.status, 410);
      assert.equal((await changes(`?after=${at}`)).res.status, 200, 'from the last pruned one, nothing is missing');
      assert.equal((await changes('')).res.status, 200, 'without after: from the oldest kept');
      // The stream's Last-Event-ID is checked against the document like a query parameter.
      for (const id of ['abc', '99999999999999999999', '-1', '']) {
        const res = await t.app.inject({
          path: '/plants/changes',
          headers: { ...requests(t.app).auth, accept: 'text/event-stream', 'last-event-id': id },
        });
        assert.equal(res.status, 400, id);
        assert.match(String((res.json as { message: string }).message), /^last-event-id must match/);
      }
      const past = await t.app.inject({
        path: '/plants/changes',
        headers: { ...requests(t.app).auth, accept: 'text/event-stream', 'last-event-id': '9999999999999999999' },
      });
      assert.deepEqual(
        [past.status, (past.json as { message: string }).message],
        [400, 'last-event-id must be at most 9223372036854775807'],
      );
    });
  });
}
