// ETag, If-None-Match and If-Match on both stores: a client keeps its copy of a plant while it
// is current, and a change made on a stale copy is refused (412) instead of overwriting.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant, send } from '../support/http.js';
import { stores, suiteOptions } from '../support/stores.js';

const ETAG = /^"[A-Za-z0-9_-]{27}"$/;

for (const store of stores) {
  describe(`conditional requests [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    const auth = () => ({ authorization: `Bearer ${server.token}` });
    const get = (id: bigint, headers: Record<string, string> = {}) =>
      send(server, { path: `/plants/${id}`, headers: { ...auth(), ...headers } });
    const put = (id: bigint, body: string, headers: Record<string, string> = {}) =>
      send(server, {
        method: 'PUT',
        path: `/plants/${id}`,
        headers: { ...auth(), 'content-type': 'application/json', ...headers },
        body,
      });
    const del = (id: bigint, headers: Record<string, string> = {}) =>
      send(server, { method: 'DELETE', path: `/plants/${id}`, headers: { ...auth(), ...headers } });
    let next = 100n;
    /** A new plant; resolves to its id and the ETag its creation answered. */
    async function plant(name = 'Monstera', tag = 'tropical'): Promise<{ id: bigint; etag: string }> {
      const id = next++;
      const res = await postPlant(server, server.token, JSON.stringify({ id: Number(id), name, tag }));
      assert.equal(res.status, 200);
      return { id, etag: res.headers.etag as string };
    }

    before(async () => {
      server = await buildTestApp({ store });
    });
    after(() => server.close());

    it('gives every response carrying one plant a strong ETag that follows its name and tag only', async () => {
      const { id, etag } = await plant();
      assert.match(etag, ETAG);
      const read = await get(id);
      assert.equal(read.headers.etag, etag, 'GET answers the ETag POST answered');
      const retry = await postPlant(server, server.token, `{"id":${id},"name":"Monstera","tag":"tropical"}`);
      assert.equal(retry.headers.etag, etag, 'an idempotent retry answers the same ETag');
      const renamed = await put(id, '{"name":"Monstera","tag":"climber"}');
      assert.notEqual(renamed.headers.etag, etag, 'a new tag is a new ETag');
      assert.equal((await get(id)).headers.etag, renamed.headers.etag);
      const back = await put(id, '{"name":"Monstera","tag":"tropical"}');
      assert.equal(back.headers.etag, etag, 'the same content has the same ETag');
      const other = await plant();
      assert.notEqual(other.etag, etag, 'another plant with the same name and tag has another ETag');
    });

    it('answers 304 to If-None-Match naming the current ETag, weakly or not, or *; 200 otherwise', async () => {
      const { id, etag } = await plant();
      for (const value of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const res = await get(id, { 'if-none-match': value });
        assert.equal(res.status, 304, value);
        assert.equal(res.text, '');
        assert.equal(res.headers.etag, etag);
      }
      const stale = await get(id, { 'if-none-match': '"AAAAAAAAAAAAAAAAAAAAAAAAAAA"' });
      assert.equal(stale.status, 200);
      assert.equal(stale.headers.etag, etag);
      assert.equal((await get(999_999n, { 'if-none-match': '*' })).status, 404);
    });

    it('answers HEAD as GET: a 304 carries no Content-Length, as GET 304 does not; a 200 the length of the body', async () => {
      const { id, etag } = await plant();
      const full = await get(id);
      const head = await send(server, { method: 'HEAD', path: `/plants/${id}`, headers: auth() });
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], String(Buffer.byteLength(full.text)));
      for (const method of ['GET', 'HEAD']) {
        const kept = await send(server, {
          method,
          path: `/plants/${id}`,
          headers: { ...auth(), 'if-none-match': etag },
        });
        assert.equal(kept.status, 304, method);
        assert.equal(kept.headers.etag, etag, method);
        assert.equal(kept.headers['content-length'], undefined, `${method} 304 has no Content-Length (RFC 9110 8.6)`);
        assert.equal(kept.headers['content-type'], undefined, method);
      }
      assert.equal((await del(id)).headers['content-length'], undefined, '204 has no Content-Length either');
    });

    it('replaces with If-Match only while the plant is the one the client read (412 otherwise)', async () => {
      const { id, etag } = await plant();
      const first = await put(id, '{"name":"first"}', { 'if-match': etag });
      assert.equal(first.status, 200);
      const lost = await put(id, '{"name":"second"}', { 'if-match': etag });
      assert.equal(lost.status, 412);
      assert.match((lost.json as { message: string }).message, /has changed/);
      assert.equal((await get(id)).text, `{"id":${id},"name":"first"}`, 'the stale write changed nothing');
      const listed = await put(id, '{"name":"third"}', { 'if-match': `"x", ${first.headers.etag as string}` });
      assert.equal(listed.status, 200, 'one of a list of tags is enough');
      assert.equal((await put(id, '{"name":"w"}', { 'if-match': `W/${listed.headers.etag as string}` })).status, 412);
      assert.equal((await put(id, '{"name":"any"}', { 'if-match': '*' })).status, 200);
      assert.equal((await put(999_999n, '{"name":"x"}', { 'if-match': '*' })).status, 412, '* needs a plant');
      assert.equal((await put(999_999n, '{"name":"x"}')).status, 404);
    });

    it('deletes with If-Match only while the plant is unchanged', async () => {
      const { id, etag } = await plant();
      await put(id, '{"name":"changed"}');
      assert.equal((await del(id, { 'if-match': etag })).status, 412);
      assert.equal((await get(id)).status, 200, 'still there');
      const current = (await get(id)).headers.etag as string;
      assert.equal((await del(id, { 'if-match': current })).status, 204);
      assert.equal((await del(id, { 'if-match': current })).status, 412, 'gone: no current tag can match');
    });

    it('refuses a malformed If-Match or If-None-Match (400), and changes nothing', async () => {
      const { id } = await plant('kept');
      for (const value of ['abc', '"unterminated', 'W/abc', '"a" "b"', ',', '"a",*', '"a\\"b"']) {
        const res = await put(id, '{"name":"changed"}', { 'if-match': value });
        assert.equal(res.status, 400, value);
        assert.match((res.json as { message: string }).message, /^If-Match /);
        assert.equal((await get(id, { 'if-none-match': value })).status, 400, value);
      }
      assert.equal(JSON.parse((await get(id)).text).name, 'kept');
    });
  });
}
