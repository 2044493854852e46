import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readJson } from '../../src/json/read-json.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { importPlants } from '../../src/use-cases/export-import.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant, send } from '../support/http.js';
import { stores, suiteOptions } from '../support/stores.js';

const MIN = -(2n ** 63n);
const MAX = 2n ** 63n - 1n;

type Rec = { id: bigint | number; name: string; tag?: string };

/** Reads a response body without losing int64 precision, as plain objects. */
function exact(text: string): Rec[] {
  return structuredClone(readJson(text)) as Rec[];
}
const one = (text: string) => structuredClone(readJson(text)) as Rec;

for (const store of stores) {
  describe(`reading, replacing and deleting plants [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    const get = (path: string, token = server.token) =>
      send(server, { path, headers: { authorization: `Bearer ${token}` } });

    before(async () => {
      server = await buildTestApp({ store });
      // 2,500 plants through the batch path, spread over the whole int64 range.
      const ids = [
        MIN,
        MAX,
        2n ** 53n + 1n,
        -(2n ** 53n) - 1n,
        ...Array.from({ length: 2496 }, (_, i) => BigInt(i * 7 - 5000)),
      ];
      const lines = ids.map((id) => `{"id":${id},"name":"p${id}"${id % 2n === 0n ? ',"tag":"even"' : ''}}`).join('\n');
      const report = await importPlants(server.services.store, server.services.doc, lines.split('\n'));
      assert.equal(report.created, 2500);
    });
    after(() => server.close());

    it('pages through 2,500 plants with limit=1000, each exactly once, in id order, following Link', async () => {
      const seen: bigint[] = [];
      let next: string | undefined = '/plants?limit=1000';
      let pages = 0;
      while (next && pages < 10) {
        const res = await get(next);
        assert.equal(res.status, 200);
        for (const p of exact(res.text)) seen.push(BigInt(p.id));
        const link = res.headers.link as string | undefined;
        next = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
        pages++;
      }
      assert.equal(pages, 3);
      assert.equal(seen.length, 2500);
      assert.equal(new Set(seen).size, 2500);
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      );
      assert.equal(seen[0], MIN);
      assert.equal(seen.at(-1), MAX);
    });

    it('returns records {id, name, tag?} with exact ids, 20 by default', async () => {
      const res = await get('/plants');
      const page = exact(res.text);
      assert.equal(page.length, 20);
      assert.deepEqual(page[0], { id: MIN, name: `p${MIN}`, tag: 'even' });
      assert.equal(res.headers.link, `</plants?limit=20&after=${page[19]!.id}>; rel="next"`);
      assert.ok(!('tag' in page.find((p) => BigInt(p.id) % 2n !== 0n)!), 'a plant without a tag has no tag member');
    });

    it('takes after at the int64 extremes', async () => {
      const fromMin = exact((await get(`/plants?limit=1&after=${MIN}`)).text);
      assert.deepEqual(
        fromMin.map((p) => BigInt(p.id)),
        [-(2n ** 53n) - 1n],
      );
      const beforeMax = exact((await get(`/plants?limit=5&after=${MAX - 1n}`)).text);
      assert.deepEqual(
        beforeMax.map((p) => BigInt(p.id)),
        [MAX],
      );
      const res = await get(`/plants?after=${MAX}`);
      assert.equal(res.text, '[]');
      assert.equal(res.headers.link, undefined);
    });

    it('answers 400 for a bad limit or after, naming it', async () => {
      for (const q of [
        'limit=0',
        'limit=1001',
        'limit=1.0',
        'limit=1e2',
        'limit=abc',
        'limit=',
        'limit=+5',
        'limit=%2010',
        'limit=1&limit=2',
      ]) {
        const res = await get(`/plants?${q}`);
        assert.equal(res.status, 400, q);
        assert.match((res.json as { message: string }).message, /limit/, q);
      }
      for (const q of [`after=${MAX + 1n}`, `after=${MIN - 1n}`, 'after=1.5', 'after=0x10', 'after=', 'after=--1']) {
        const res = await get(`/plants?${q}`);
        assert.equal(res.status, 400, q);
        assert.match((res.json as { message: string }).message, /after/, q);
      }
      assert.equal((await get('/plants?limit=1000')).status, 200);
    });

    it('reads one plant by id, exactly, and 404s an absent one', async () => {
      const res = await get(`/plants/${2n ** 53n + 1n}`);
      assert.equal(res.status, 200);
      assert.deepEqual(one(res.text), { id: 2n ** 53n + 1n, name: `p${2n ** 53n + 1n}` });
      assert.equal((await get(`/plants/${MIN}`)).status, 200);
      const missing = await get('/plants/123456789');
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.json, { error: 404, message: 'plant 123456789 does not exist' });
    });

    it('answers 400 for a path id that is not plain decimal int64', async () => {
      for (const id of ['abc', '1.0', '1e3', '%2B1', `${MAX + 1n}`, `${MIN - 1n}`, '0x1', ' 1']) {
        const res = await get(`/plants/${id.replace(' ', '%20')}`);
        assert.equal(res.status, 400, id);
        assert.match((res.json as { message: string }).message, /^id /, id);
      }
    });

    it('replaces name and tag with PUT, then GET shows it', async () => {
      await postPlant(server, server.token, '{"id":424242,"name":"Old","tag":"t"}');
      const put = (body: string, id = '424242') =>
        send(server, {
          method: 'PUT',
          path: `/plants/${id}`,
          headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
          body,
        });
      const res = await put('{"name":"New","extra":1}');
      assert.equal(res.status, 200);
      assert.equal(res.text, '{"name":"New"}');
      assert.deepEqual(one((await get('/plants/424242')).text), { id: 424242, name: 'New' });
      assert.equal((await put('{"name":"Newer","tag":"","id":424242}')).status, 200);
      assert.deepEqual(one((await get('/plants/424242')).text), { id: 424242, name: 'Newer', tag: '' });
      assert.equal((await put('{"name":"x","id":1}')).status, 400);
      assert.equal((await put('{"name":"x","id":"424242"}')).status, 400);
      assert.equal((await put('{"tag":"no name"}')).status, 400);
      assert.equal((await put('{"name":"x"}', '999999999')).status, 404);
      assert.equal((await put('{"name":"x"}', 'abc')).status, 400);
      assert.deepEqual(one((await get('/plants/424242')).text), { id: 424242, name: 'Newer', tag: '' });
    });

    it('deletes with 204 and no body, 404s the second time, and the id can be created again', async () => {
      await postPlant(server, server.token, '{"id":515151,"name":"Gone"}');
      const del = () =>
        send(server, {
          method: 'DELETE',
          path: '/plants/515151',
          headers: { authorization: `Bearer ${server.token}` },
        });
      const first = await del();
      assert.equal(first.status, 204);
      assert.equal(first.text, '');
      assert.equal((await del()).status, 404);
      assert.equal((await get('/plants/515151')).status, 404);
      const again = await postPlant(server, server.token, '{"id":515151,"name":"Back"}');
      assert.equal(again.status, 200);
      assert.deepEqual(one((await get('/plants/515151')).text), { id: 515151, name: 'Back' });
    });

    it('needs plants:read to read and plants:write to change', async () => {
      const { store: s } = server.services;
      const reader = (await createToken(s, { name: 'r', scopes: ['plants:read'] })).token;
      const writer = (await createToken(s, { name: 'w', scopes: ['plants:write'] })).token;
      assert.equal((await get('/plants', reader)).status, 200);
      assert.equal((await get('/plants/1', reader)).status, 404);
      for (const path of ['/plants', '/plants/1']) {
        const res = await get(path, writer);
        assert.equal(res.status, 403, path);
        assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope", scope="plants:read"/);
      }
      for (const method of ['PUT', 'DELETE']) {
        const res = await send(server, {
          method,
          path: '/plants/1',
          headers: { authorization: `Bearer ${reader}`, 'content-type': 'application/json' },
          body: method === 'PUT' ? '{"name":"x"}' : undefined,
        });
        assert.equal(res.status, 403, method);
        assert.match(String(res.headers['www-authenticate']), /scope="plants:write"/);
      }
      assert.equal((await send(server, { path: '/plants' })).status, 401);
    });

    it('answers HEAD wherever GET is: the same status and headers, no body', async () => {
      const auth = { authorization: `Bearer ${server.token}` };
      for (const path of ['/plants/-5000', '/plants?limit=3', '/plants/424242', '/healthz', '/openapi.json']) {
        const got = await send(server, { path, headers: auth });
        const head = await send(server, { method: 'HEAD', path, headers: auth });
        assert.equal(head.status, got.status, path);
        assert.equal(head.text, '', path);
        for (const name of ['content-type', 'content-length', 'etag', 'link']) {
          assert.equal(head.headers[name], got.headers[name], `${path}: ${name}`);
        }
      }
      const etag = String((await send(server, { path: '/plants/-5000', headers: auth })).headers.etag);
      const cached = await send(server, {
        method: 'HEAD',
        path: '/plants/-5000',
        headers: { ...auth, 'if-none-match': etag },
      });
      assert.equal(cached.status, 304);
      const refused = await send(server, { method: 'HEAD', path: '/plants/-5000' });
      assert.equal(refused.status, 401);
      assert.equal(refused.text, '');
    });

    it('answers 405 with Allow on /plants/{id} for other methods', async () => {
      const res = await send(server, { method: 'POST', path: '/plants/1' });
      assert.equal(res.status, 405);
      assert.equal(res.headers.allow, 'GET, HEAD, PUT, DELETE, PATCH');
    });
  });
}
