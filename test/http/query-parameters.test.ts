// Every operation refuses query parameters its document does not declare, naming them: a client
// relying on a filter an operation does not have learns so, instead of getting every plant.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helper.js';
import { send } from '../support/http.js';

describe('query parameters', () => {
  let server: TestApp;
  const get = (path: string) => send(server, { path, headers: { authorization: `Bearer ${server.token}` } });
  const message = (res: { json: unknown }) => (res.json as { message: string }).message;

  before(async () => {
    server = await buildTestApp();
  });
  after(() => server.close());

  it('refuses a parameter the operation does not declare, naming it and what the operation takes', async () => {
    const res = await get('/plants?tga=rare');
    assert.equal(res.status, 400);
    assert.equal(message(res), 'unknown query parameter "tga": GET /plants takes only limit, after, tag, q');
    const two = await get('/plants?limit=2&sort=name&order=desc');
    assert.equal(message(two), 'unknown query parameters "sort", "order": GET /plants takes only limit, after, tag, q');
  });

  it('refuses any parameter where an operation declares none', async () => {
    for (const path of ['/plants/1?fields=name', '/healthz?verbose=1', '/openapi.json?v=2']) {
      const res = await get(path);
      assert.equal(res.status, 400, path);
      assert.match(message(res), /takes no query parameters$/, path);
    }
  });

  it('takes a repeatable parameter given once or many times, and refuses others given twice', async () => {
    assert.equal((await get('/plants?tag=a')).status, 200);
    assert.equal((await get('/plants?tag=a&tag=b')).status, 200);
    const twice = await get('/plants?limit=1&limit=2');
    assert.equal(twice.status, 400);
    assert.equal(message(twice), 'query parameter limit is given 2 times; give it once');
    const eleven = await get(`/plants?${Array.from({ length: 11 }, (_, i) => `tag=t${i}`).join('&')}`);
    assert.equal(eleven.status, 400);
    assert.match(message(eleven), /^tag must/);
  });

  it('checks q: at least one letter or digit, at most 200 characters, no NUL', async () => {
    for (const [q, expected] of [
      ['', /q must have at least 1 character/],
      ['%20!%3F', /q must hold at least one letter or digit/],
      ['x'.repeat(201), /q must have at most 200 characters/],
      ['a%00b', /NUL/],
    ] as const) {
      const res = await get(`/plants?q=${q}`);
      assert.equal(res.status, 400, q);
      assert.match(message(res), expected, q);
    }
    assert.equal((await get('/plants?tag=a%00b')).status, 400);
  });

  it('refuses bad percent-encoding and escaped bytes that are not UTF-8, in names and values', async () => {
    for (const path of ['/plants?q=%FF', '/plants?tag=%C0%80', '/plants?q=%', '/plants?q=a%zz', '/plants?%FF=1']) {
      const res = await get(path);
      assert.equal(res.status, 400, path);
      assert.match(message(res), /^the query string is not valid/, path);
    }
    assert.equal((await get('/plants?q=caf%C3%A9+au+lait&tag=a%26b')).status, 200);
  });

  it('keeps the names exact: a parameter spelt in another case is another parameter', async () => {
    assert.equal((await get('/plants?Limit=5')).status, 400);
  });
});
