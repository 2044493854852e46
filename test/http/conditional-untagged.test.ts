// If-Match and If-None-Match where the representation has no ETag: a page of the list, POST
// /plants (whose target is the list), the operator's GETs. RFC 9110 13.1 has them evaluated on
// every request that selects a representation; one that exists and has no entity tag matches
// `*` only. A request that fails without its conditions ignores them (13.2.1).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helper.js';
import { postPlant, send, type RawResponse } from '../support/http.js';
import { stores, suiteOptions } from '../support/stores.js';

const message = (res: RawResponse) => (res.json as { message?: string } | undefined)?.message ?? '';

for (const store of stores) {
  describe(`conditional requests without an ETag [${store}]`, suiteOptions(store), () => {
    const served = useTestApp({ store });
    const auth = () => ({ authorization: `Bearer ${served.app.token}` });
    const get = (path: string, headers: Record<string, string>, method = 'GET') =>
      send(served.app, { method, path, headers: { ...auth(), ...headers } });

    it('GET and HEAD /plants: If-Match other than * is 412, If-None-Match: * is 304; the others hold', async () => {
      for (const id of [1, 2, 3]) await postPlant(served.app, served.app.token, `{"id":${id},"name":"p${id}"}`);
      for (const method of ['GET', 'HEAD']) {
        const refused = await get('/plants?limit=1', { 'if-match': '"x"' }, method);
        assert.equal(refused.status, 412, method);
        assert.equal(refused.headers.link, undefined, `${method}: none of the page's headers`);
        const both = await get('/plants?limit=1', { 'if-match': '"x"', 'if-none-match': '*' }, method);
        assert.equal(both.status, 412, `${method}: If-Match is evaluated first`);
        const kept = await get('/plants?limit=1', { 'if-none-match': '*' }, method);
        assert.equal(kept.status, 304, method);
        assert.equal(kept.text, '');
        assert.equal(kept.headers['content-length'], undefined, `${method} 304 has no Content-Length`);
        assert.equal(kept.headers['content-type'], undefined);
        for (const headers of <Record<string, string>[]>[
          { 'if-match': '*' },
          { 'if-none-match': '"x", W/"y"' },
          { 'if-none-match': ',' },
        ]) {
          const page = await get('/plants?limit=1', headers, method);
          assert.equal(page.status, 200, `${method} ${JSON.stringify(headers)}`);
          assert.equal(page.headers.link, '</plants?limit=1&after=1>; rel="next"');
        }
      }
      assert.match(message(await get('/plants', { 'if-match': '"x"' })), /^\/plants has no ETag/);
      // Without its conditions this request is 400: they are ignored.
      assert.equal((await get('/plants?q=%21%21', { 'if-match': '"x"' })).status, 400);
      assert.equal((await get('/plants', { 'if-none-match': '"x" "y"' })).status, 400, 'malformed');
    });

    it('POST /plants: If-None-Match: * or an If-Match naming a tag is 412, and nothing is created', async () => {
      const post = (id: number, headers: Record<string, string>) =>
        postPlant(served.app, served.app.token, `{"id":${id},"name":"new"}`, headers);
      for (const headers of <Record<string, string>[]>[
        { 'if-none-match': '*' },
        { 'if-match': '"x"' },
        { 'if-match': 'W/"x"' },
      ]) {
        const res = await post(10, headers);
        assert.equal(res.status, 412, JSON.stringify(headers));
        assert.equal((await get('/plants/10', {})).status, 404, 'not created');
      }
      assert.match(message(await post(10, { 'if-none-match': '*' })), /exists, so If-None-Match: \* does not hold/);
      assert.equal((await post(10, { 'if-match': '*' })).status, 200);
      assert.equal((await post(11, { 'if-none-match': '"x"' })).status, 200);
      assert.equal((await post(12, { 'if-match': 'x' })).status, 400, 'malformed');
    });

    it("evaluates them on the operator's GETs too, after their own failures", async () => {
      for (const path of [
        '/healthz',
        '/readyz',
        '/openapi.json',
        '/docs',
        '/docs/swagger-ui.css',
        '/console',
        '/console/console.js',
        '/metrics',
      ]) {
        const page = await get(path, {});
        assert.equal(page.status, 200, path);
        const refused = await get(path, { 'if-match': '"x"' });
        assert.equal(refused.status, 412, path);
        for (const header of ['cache-control', 'content-security-policy']) {
          assert.equal(refused.headers[header], undefined, `${path}: a 412 has no ${header} of the page`);
        }
        const kept = await get(path, { 'if-none-match': '*' }, 'HEAD');
        assert.equal(kept.status, 304, path);
        assert.equal(kept.headers['content-length'], undefined, path);
        assert.equal(kept.headers['cache-control'], page.headers['cache-control'], `${path}: 304 keeps Cache-Control`);
        assert.equal((await get(path, { 'if-match': '*' })).status, 200, path);
      }
      assert.equal((await get('/docs/nothing.js', { 'if-match': '"x"' })).status, 404, 'a 404 wins (13.2.1)');
      assert.equal((await get('/nowhere', { 'if-match': '"x"' })).status, 404);
    });
  });
}
