// Origins an attacker's page or script might send to pass for an allowed one (PRODUCT.md §4,
// Browsers: exact origins only). Each gets no Access-Control-* header on a request and a 403
// preflight. The near misses test/http/cors.test.ts tries already (a trailing slash, an upper case
// scheme, another port or scheme, a suffix of the host, `null`, empty) are not repeated here.
// SQLite only: the origin is checked before any store is read.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helper.js';
import { assertConforms, type RawResponse } from '../support/http.js';
import { firstResponse, open } from '../support/raw-connection.js';

const PAGE = 'http://127.0.0.1:8080';
const NAMED = 'https://plants.example';

const SPOOFS = [
  // the case of a host name (browsers send it lower case)
  'https://PLANTS.example',
  'https://Plants.Example',
  // an allowed host inside another
  'http://evil127.0.0.1:8080',
  'https://evilplants.example',
  'https://evil.plants.example',
  'https://plants.example.evil.example',
  'http://127.0.0.1:80801',
  // the same place spelled otherwise
  'https://plants.example:443',
  'http://127.0.0.1:08080',
  'https://plants%2Eexample',
  'http://0x7f.0.0.1:8080',
  // userinfo, either way round
  'http://user@127.0.0.1:8080',
  'http://127.0.0.1:8080@evil.example',
  'https://plants.example@evil.example',
  // a path, a query or a fragment after the origin
  'https://plants.example/app',
  'https://plants.example/.',
  'https://plants.example?x',
  'https://plants.example#x',
  // null in other cases; both allowed origins in one header, as a list
  'NULL',
  'Null',
  `${NAMED} ${PAGE}`,
  `${NAMED}, ${PAGE}`,
];

const accessControl = (res: { headers: Record<string, unknown> }) =>
  Object.keys(res.headers).filter((h) => h.toLowerCase().startsWith('access-control-'));

function assertRefused(get: RawResponse, preflight: RawResponse, what: string): void {
  assert.equal(get.status, 200, `${what}: ${get.text}`);
  assert.deepEqual(accessControl(get), [], what);
  assert.equal(preflight.status, 403, `${what}: ${preflight.text}`);
  assert.deepEqual(accessControl(preflight), [], what);
  assert.match(preflight.text, /may not call this API \(CORS_ORIGINS\)/, what);
}

describe('CORS, an attacker spoofing an allowed origin', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await buildTestApp({ env: { CORS_ORIGINS: `${PAGE},${NAMED}`, RATE_LIMIT_PER_WINDOW: '1000' } });
    port = Number(new URL(await t.listen()).port);
  });
  after(() => t.close());

  it('gives a near miss of an allowed origin no CORS header, and refuses its preflight', async () => {
    for (const origin of SPOOFS) {
      const get = await t.inject({ path: '/plants', headers: { authorization: `Bearer ${t.token}`, origin } });
      const preflight = await t.inject({
        method: 'OPTIONS',
        path: '/plants',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      assertRefused(get, preflight, origin);
    }
    // The allowed ones themselves, so that the refusals above are not for some other reason.
    for (const origin of [PAGE, NAMED]) {
      const get = await t.inject({ path: '/plants', headers: { authorization: `Bearer ${t.token}`, origin } });
      assert.equal(get.headers['access-control-allow-origin'], origin);
    }
  });

  it('gives a request with two Origin headers none, allowed or not, in either order', async () => {
    const twice = async (request: string, origins: string[]) => {
      const c = open(port);
      const lines = origins.map((o) => `Origin: ${o}\r\n`).join('');
      c.socket.write(`${request} /plants HTTP/1.1\r\nHost: x\r\n${lines}Connection: close\r\n`);
      c.socket.write(
        request === 'GET' ? `Authorization: Bearer ${t.token}\r\n\r\n` : 'Access-Control-Request-Method: POST\r\n\r\n',
      );
      await c.ended;
      const res = firstResponse(c.data());
      assertConforms(request, '/plants', res);
      return res;
    };
    for (const origins of [
      [PAGE, PAGE],
      [PAGE, NAMED],
      ['https://evil.example', PAGE],
      [PAGE, 'https://evil.example'],
    ]) {
      assertRefused(await twice('GET', origins), await twice('OPTIONS', origins), origins.join(' + '));
    }
    // One Origin header over the same socket is allowed: the refusals above are for the two.
    assert.equal((await twice('GET', [PAGE])).headers['access-control-allow-origin'], PAGE);
  });
});
