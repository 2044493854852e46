// Tokens pasted into a URL never reach the log, however the URL spells them: redaction works on
// the percent-decoded form of every path segment and query parameter.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { lenientDecode, redactUrl } from '../../src/log.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { send } from '../support/http.js';

const SECRET = randomBytes(32).toString('base64url'); // the 43 characters after pst_
const TOKEN = `pst_${SECRET}`;
const OTHER = 'hunter2-not-a-pst-token';
/** A JWT's shape (a JSON header in base64url, a payload, a signature), its parts holding OTHER. */
const JWT = `eyJhbGciOiJFUzI1NiJ9.eyJ${OTHER}.${OTHER}`;

/** Every byte of `text` as %XX, in upper or lower case hex. */
const encodeAll = (text: string, lower = false) =>
  [...Buffer.from(text)]
    .map((b) => `%${b.toString(16).padStart(2, '0')[lower ? 'toLowerCase' : 'toUpperCase']()}`)
    .join('');

/** URLs that carry TOKEN (or OTHER under a credential's name) in one spelling or another. */
const SPELLINGS: string[] = [
  `/plants?q=${TOKEN}`,
  `/plants?q=pst%5F${SECRET}`,
  `/plants?q=pst%5f${SECRET}`,
  `/plants?q=%70st_${SECRET}`,
  `/plants?q=%70%73%74%5F${encodeAll(SECRET)}`,
  `/plants?q=${encodeAll(TOKEN, true)}`,
  `/plants?q=pst%255F${SECRET}`,
  `/plants?q=%2570st_${SECRET}`,
  `/plants?q=%25%37%30st_${SECRET}`,
  `/plants?q=PST_${SECRET}`,
  `/plants?q=x+pst_${SECRET}`,
  `/plants?q=a+b%2Bpst%5F${SECRET}`,
  `/plants?q=%E9pst_${SECRET}`,
  `/plants?q=%zz%pst_${SECRET}`,
  `/plants?limit=1&q=${TOKEN}&after=2`,
  `/plants?a=1;q=${TOKEN}`,
  `/plants?${TOKEN}`,
  `/plants?pst%5F${SECRET}=1`,
  `/plants?q=1#${TOKEN}`,
  `/plants/${TOKEN}`,
  `/plants/pst%5F${SECRET}`,
  `/plants/%70st_${SECRET}`,
  `/x/pst%255F${SECRET}/y`,
  `/x/${encodeAll(TOKEN)}`,
  `/x#${TOKEN}`,
  `/plants?access_token=${OTHER}`,
  `/plants?access%5Ftoken=${OTHER}`,
  `/plants?access%5ftoken=${OTHER}`,
  `/plants?%61ccess_token=${OTHER}`,
  `/plants?access%255Ftoken=${OTHER}`,
  `/plants?ACCESS_TOKEN=${OTHER}`,
  `/plants?token=${OTHER}`,
  `/plants?%74oken=${OTHER}`,
  `/plants?api_key=${OTHER}`,
  `/plants?api%5Fkey=${OTHER}`,
  `/plants?API%5FKEY=${OTHER}`,
  `/plants?q=%zz&token=${OTHER}`,
  `/plants?a=b&token=${encodeAll(OTHER)}&c=d`,
  `/plants?q=${JWT}`,
  `/plants?q=${encodeAll(JWT)}`,
  `/plants/${JWT}`,
  `/plants?q=Bearer%20${OTHER}`,
  `/plants?q=bearer+${OTHER}`,
  `/plants?password=${OTHER}`,
  `/plants?client%5Fsecret=${OTHER}`,
  `/plants?Authorization=${OTHER}`,
  `/plants?jwt=${OTHER}`,
];

function assertClean(logged: string, url: string): void {
  const decoded = lenientDecode(logged, true);
  for (const text of [logged, decoded]) {
    assert.ok(!text.includes(SECRET), `the token's secret part is in ${JSON.stringify(logged)} (from ${url})`);
    assert.ok(!text.includes(OTHER), `the credential is in ${JSON.stringify(logged)} (from ${url})`);
  }
  assert.match(logged, /\[redacted\]/, url);
}

describe('redactUrl', () => {
  for (const url of SPELLINGS) {
    it(url.length > 90 ? `${url.slice(0, 90)}…` : url, () => assertClean(redactUrl(url), url));
  }

  it('leaves ordinary URLs as they are, encoded as they came', () => {
    for (const url of [
      '/plants?limit=20&after=5',
      '/plants/42',
      '/plants?q=%41%42',
      '/docs/swagger-ui.css',
      '/a%2Fb?x=%zz',
    ]) {
      assert.equal(redactUrl(url), url);
    }
  });

  it('keeps the rest of the URL readable', () => {
    assert.equal(
      redactUrl(`/plants?limit=1&access%5Ftoken=${OTHER}&after=2`),
      '/plants?limit=1&access%5Ftoken=[redacted]&after=2',
    );
    assert.equal(redactUrl(`/plants/pst%5F${SECRET}?limit=1`), '/plants/[redacted]?limit=1');
  });

  it('decodes leniently and never throws', () => {
    assert.equal(lenientDecode('%zz%4'), '%zz%4');
    assert.equal(lenientDecode('%2541'), 'A');
    assert.equal(lenientDecode('a+b', true), 'a b');
    assert.equal(lenientDecode('%E9'), '\ufffd');
    assert.equal(lenientDecode('🌿%F0%9F%8C%BF'), '🌿🌿');
  });
});

describe('the request log line', () => {
  let server: TestApp;
  before(async () => {
    server = await buildTestApp({ logs: true });
  });
  after(async () => {
    await server?.close();
  });

  it('never shows a token, for requests that succeed, fail, or have a bad URL', async () => {
    const auth = { authorization: `Bearer ${server.token}` };
    const urls = [...SPELLINGS.filter((u) => !u.includes('#')), `/plants/%E0%A4%A?q=pst%5F${SECRET}`];
    for (const path of urls) {
      const before = server.logs.length;
      await send(server, { path, headers: auth });
      const lines = server.logs.slice(before).map((l) => JSON.parse(l) as { msg: string; url?: string });
      const line = lines.find((l) => l.msg === 'request');
      assert.ok(line?.url, `no request line for ${path}: ${server.logs.slice(before).join('\n')}`);
      assertClean(line.url, path);
      for (const l of server.logs.slice(before)) assert.ok(!l.includes(SECRET) && !l.includes(OTHER), l);
    }
  });

  it('never shows a credential sent as the request id, and echoes a plain one', async () => {
    const auth = { authorization: `Bearer ${server.token}` };
    const ticket = `pstt_${'A'.repeat(43)}`;
    const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
    for (const id of [server.token, ticket, jwt, `x-${server.token}`]) {
      const before = server.logs.length;
      const r = await send(server, { path: '/plants?limit=1', headers: { ...auth, 'x-request-id': id } });
      assert.equal(r.status, 200);
      assert.notEqual(r.headers['x-request-id'], id, 'a new id, not the credential');
      for (const l of server.logs.slice(before)) assert.ok(!l.includes(id), l);
    }
    const r = await send(server, { path: '/plants?limit=1', headers: { ...auth, 'x-request-id': 'trace-42.a:b' } });
    assert.equal(r.headers['x-request-id'], 'trace-42.a:b');
  });
});
