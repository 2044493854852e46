// ETag, If-None-Match and If-Match on one plant, on both stores, as RFC 9110 section 13 has them:
// a client keeps its copy of a plant while it is current, a change made on a stale copy is
// refused (412) instead of overwriting, If-None-Match refuses a change of what the client does
// not expect, each method evaluates If-Match before If-None-Match, and a missing plant is 404
// whatever the conditions.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { etagOf } from '../../src/domain/plant-write.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { assertConforms, postPlant, rawResponse, send, type RawResponse } from '../support/http.js';
import { stores, suiteOptions } from '../support/stores.js';

const ETAG = /^"[A-Za-z0-9_-]{27}"$/;

/** One request over a real socket with repeated header fields, each sent as a line of its own. */
function withFieldLines(base: string, path: string, headers: Record<string, string | string[]>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const r = request(new URL(path, base), { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const response = rawResponse(res.statusCode!, res.headers, Buffer.concat(chunks).toString('utf8'));
        assertConforms('GET', path, response);
        resolve(response);
      });
    });
    r.on('error', reject);
    r.end();
  });
}

for (const store of stores) {
  describe(`conditional requests [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    const auth = () => ({ authorization: `Bearer ${server.token}` });
    const get = (id: bigint, headers: Record<string, string> = {}, method = 'GET') =>
      send(server, { method, path: `/plants/${id}`, headers: { ...auth(), ...headers } });
    const change =
      (method: string, type: string) =>
      (id: bigint, body: string, headers: Record<string, string> = {}) =>
        send(server, { method, path: `/plants/${id}`, headers: { ...auth(), 'content-type': type, ...headers }, body });
    const put = change('PUT', 'application/json');
    const patch = change('PATCH', 'application/merge-patch+json');
    const del = (id: bigint, headers: Record<string, string> = {}) =>
      send(server, { method: 'DELETE', path: `/plants/${id}`, headers: { ...auth(), ...headers } });
    const stored = async (id: bigint) => (await get(id)).text;
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
      const head = await get(id, {}, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], String(Buffer.byteLength(full.text)));
      for (const method of ['GET', 'HEAD']) {
        const kept = await get(id, { 'if-none-match': etag }, method);
        assert.equal(kept.status, 304, method);
        assert.equal(kept.headers.etag, etag, method);
        assert.equal(kept.headers['content-length'], undefined, `${method} 304 has no Content-Length (RFC 9110 8.6)`);
        assert.equal(kept.headers['content-type'], undefined, method);
      }
      assert.equal((await del(id)).headers['content-length'], undefined, '204 has no Content-Length either');
    });

    it('refuses GET and HEAD with a failing If-Match (412), evaluated before If-None-Match', async () => {
      const { id, etag } = await plant();
      const stale = '"AAAAAAAAAAAAAAAAAAAAAAAAAAA"';
      for (const method of ['GET', 'HEAD']) {
        for (const headers of <Record<string, string>[]>[
          { 'if-match': stale },
          { 'if-match': `W/${etag}` }, // If-Match compares strongly: a weak tag never matches
          { 'if-match': stale, 'if-none-match': etag }, // 412 comes before 304
        ]) {
          const res = await get(id, headers, method);
          assert.equal(res.status, 412, `${method} ${JSON.stringify(headers)}`);
          assert.equal(res.headers.etag, undefined);
        }
        assert.equal((await get(id, { 'if-match': etag }, method)).status, 200, method);
        assert.equal((await get(id, { 'if-match': `${stale}, ${etag}` }, method)).status, 200, method);
        assert.equal((await get(id, { 'if-match': '*' }, method)).status, 200, method);
        assert.equal((await get(id, { 'if-match': etag, 'if-none-match': etag }, method)).status, 304, method);
        assert.equal((await get(999_999n, { 'if-match': etag }, method)).status, 404, 'missing: 404 (13.2.1)');
      }
      const refused = await get(id, { 'if-match': stale });
      assert.match((refused.json as { message: string }).message, /has changed/);
    });

    it('replaces with If-Match only while the plant is the one the client read (412 otherwise)', async () => {
      const { id, etag } = await plant();
      const first = await put(id, '{"name":"first"}', { 'if-match': etag });
      assert.equal(first.status, 200);
      const lost = await put(id, '{"name":"second"}', { 'if-match': etag });
      assert.equal(lost.status, 412);
      assert.match((lost.json as { message: string }).message, /has changed/);
      assert.equal(await stored(id), `{"id":${id},"name":"first"}`, 'the stale write changed nothing');
      const listed = await put(id, '{"name":"third"}', { 'if-match': `"x", ${first.headers.etag as string}` });
      assert.equal(listed.status, 200, 'one of a list of tags is enough');
      assert.equal((await put(id, '{"name":"w"}', { 'if-match': `W/${listed.headers.etag as string}` })).status, 412);
      assert.equal((await put(id, '{"name":"any"}', { 'if-match': '*' })).status, 200);
      // Without its conditions the request would be 404, so they are ignored (RFC 9110 13.2.1).
      assert.equal((await put(999_999n, '{"name":"x"}', { 'if-match': '*' })).status, 404);
      assert.equal((await put(999_999n, '{"name":"x"}')).status, 404);
    });

    it('deletes with If-Match only while the plant is unchanged; a deleted one is 404', async () => {
      const { id, etag } = await plant();
      await put(id, '{"name":"changed"}');
      assert.equal((await del(id, { 'if-match': etag })).status, 412);
      assert.equal((await get(id)).status, 200, 'still there');
      const current = (await get(id)).headers.etag as string;
      assert.equal((await del(id, { 'if-match': current })).status, 204);
      assert.equal((await del(id, { 'if-match': current })).status, 404);
    });

    it('refuses PUT, PATCH and DELETE whose If-None-Match names the plant (412) and changes nothing', async () => {
      const { id, etag } = await plant('Kept', 'as is');
      const before = await stored(id);
      for (const value of ['*', etag, `W/${etag}`, `"other", ${etag}`]) {
        const answers = [
          await put(id, '{"name":"overwritten"}', { 'if-none-match': value }),
          await patch(id, '{"name":"patched"}', { 'if-none-match': value }),
          await del(id, { 'if-none-match': value }),
        ];
        for (const res of answers) {
          assert.equal(res.status, 412, value);
          assert.match((res.json as { message: string }).message, /matches If-None-Match .*nothing changed$/);
        }
        assert.equal(await stored(id), before, `${value}: nothing changed`);
      }
      const both = await del(id, { 'if-match': '"stale"', 'if-none-match': '*' });
      assert.match((both.json as { message: string }).message, /has changed/, 'If-Match is evaluated first');
      assert.equal((await put(id, '{"name":"new"}', { 'if-none-match': '"other"' })).status, 200);
      assert.equal((await put(id, '{"name":"newer"}', { 'if-match': '*', 'if-none-match': etag })).status, 200);
      assert.equal((await del(id, { 'if-none-match': etag })).status, 204, 'no longer the tag it names');
      assert.equal((await put(id, '{"name":"x"}', { 'if-none-match': '*' })).status, 404, 'missing: 404');
    });

    it('decides If-None-Match with the write: of concurrent "set X unless it is X", exactly one changes it', async () => {
      const { id } = await plant('start');
      const wanted = etagOf({ id, name: 'target', tag: '' });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => put(id, '{"name":"target","tag":""}', { 'if-none-match': wanted })),
      );
      const statuses = answers.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(' '));
      assert.equal(statuses.filter((s) => s === 412).length, 19, statuses.join(' '));
    });

    it('reads an entity tag with a comma inside, empty list elements and several field lines as one list', async () => {
      const { id, etag } = await plant();
      // `"a,b"` is one entity tag (RFC 9110 etagc), not two broken ones.
      const comma = await put(id, '{"name":"x"}', { 'if-match': '"a,b"' });
      assert.equal(comma.status, 412, comma.text);
      assert.equal((await get(id, { 'if-none-match': '"a,b"' })).status, 200);
      assert.equal((await get(id, { 'if-none-match': `"a,b",${etag}` })).status, 304);
      assert.equal((await get(id, { 'if-none-match': ` , ,"a,b" ,\t${etag} , ` })).status, 304);
      assert.equal((await get(id, { 'if-match': `"a,W/b",,W/"c", ${etag}` })).status, 200);
      // An empty list names no tag: If-Match fails, If-None-Match holds.
      assert.equal((await get(id, { 'if-match': ',' })).status, 412);
      assert.equal((await get(id, { 'if-none-match': ' , ' })).status, 200);
      const base = await server.listen();
      const lines = (values: string[]) => withFieldLines(base, `/plants/${id}`, { ...auth(), 'if-none-match': values });
      assert.equal((await lines(['"a,b"', etag])).status, 304, 'the second field line names it');
      assert.equal((await lines(['"a,b"', '"c"'])).status, 200);
      assert.equal((await lines(['*', '*'])).status, 400, '* is alone or not at all');
    });

    it('refuses a malformed If-Match or If-None-Match (400), and changes nothing', async () => {
      const { id } = await plant('kept');
      for (const value of [
        'abc',
        '"unterminated',
        'W/abc',
        '"a" "b"',
        '"a",*',
        '*,',
        '"a"b',
        'w/"a"',
        '"a, b"',
        '"a\\"b"',
        '\u00a0"a"',
      ]) {
        const res = await put(id, '{"name":"changed"}', { 'if-match': value });
        assert.equal(res.status, 400, value);
        assert.match((res.json as { message: string }).message, /^If-Match /);
        assert.equal((await get(id, { 'if-none-match': value })).status, 400, value);
        assert.equal((await del(id, { 'if-none-match': value })).status, 400, value);
      }
      assert.equal(JSON.parse(await stored(id)).name, 'kept');
    });
  });
}
