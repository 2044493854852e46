// CORS as PRODUCT.md §4 (Browsers) has it, tried as a page and as an attacker would: the origins
// of CORS_ORIGINS only, exactly as browsers send them; every answer of the plant API to them
// (errors too) readable; preflights answered without a credential, with each path's methods;
// nothing for anyone else, nor on the operators' endpoints; nothing at all when unset.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { loadDocument } from '../../src/openapi/document.js';
import { ALLOWED_HEADERS, EXPOSED_HEADERS, PREFLIGHT_MAX_AGE_S } from '../../src/http/plugins/cors.js';
import { buildTestApp, type TestApp } from '../helper.js';
import type { RawResponse } from '../support/http.js';

const PAGE = 'http://127.0.0.1:5173';
const OTHER_PAGE = 'http://[::1]:8080';

const corsHeaders = (res: RawResponse) =>
  Object.keys(res.headers).filter((h) => h.startsWith('access-control-') || h === 'vary');

describe('CORS_ORIGINS', () => {
  it('is refused at start for "*", "null", or an origin not as browsers send it', () => {
    for (const [value, why] of [
      ['*', /"\*" is refused/],
      ['http://*.example.com', /"\*" is refused, alone or in a host/],
      [`${PAGE},https://*.plants.test`, /in a host/],
      ['null', /must not list "null"/],
      [`${PAGE}/`, /did you mean "http:\/\/127\.0\.0\.1:5173"\?/],
      ['HTTP://127.0.0.1:5173', /did you mean/],
      ['http://127.0.0.1:80', /did you mean "http:\/\/127\.0\.0\.1"\?/],
      [`${PAGE}/app`, /did you mean/],
      ['127.0.0.1:5173', /scheme:\/\/host/],
    ] as const) {
      assert.throws(
        () => loadConfig({ CORS_ORIGINS: value }),
        (err: Error) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.match(err.message, /^CORS_ORIGINS must /);
          assert.match(err.message, why);
          return true;
        },
      );
    }
    assert.deepEqual(loadConfig({ CORS_ORIGINS: ` ${PAGE}, ${OTHER_PAGE} ` }).corsOrigins, [PAGE, OTHER_PAGE]);
    assert.deepEqual(loadConfig({}).corsOrigins, []);
  });
});

describe('CORS, unset (the default): no CORS header, ever', () => {
  let t: TestApp;
  before(async () => (t = await buildTestApp()));
  after(() => t.close());

  it('sends none to a page, and answers a preflight as any OPTIONS: 405', async () => {
    const auth = { authorization: `Bearer ${t.token}`, origin: PAGE };
    const list = await t.inject({ path: '/plants', headers: auth });
    assert.equal(list.status, 200);
    assert.deepEqual(corsHeaders(list), []);
    const preflight = await t.inject({
      method: 'OPTIONS',
      path: '/plants',
      headers: { origin: PAGE, 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 405);
    assert.deepEqual(corsHeaders(preflight), []);
  });
});

describe('CORS, for the origins of CORS_ORIGINS', () => {
  let t: TestApp;
  let base = '';
  before(async () => {
    t = await buildTestApp({ env: { CORS_ORIGINS: `${PAGE},${OTHER_PAGE}`, RATE_LIMIT_PER_WINDOW: '1000' } });
    base = await t.listen();
  });
  after(() => t.close());

  const fromPage = (origin = PAGE) => ({ authorization: `Bearer ${t.token}`, origin });
  const readable = (res: RawResponse, origin = PAGE) => {
    assert.equal(res.headers['access-control-allow-origin'], origin, `${res.status}: ${JSON.stringify(res.headers)}`);
    assert.match(String(res.headers.vary), /\bOrigin\b/);
    assert.equal(res.headers['access-control-expose-headers'], EXPOSED_HEADERS);
    assert.equal(res.headers['access-control-allow-credentials'], undefined, 'no cookie, no credentials mode');
  };

  it('lets a page read every answer of the plant API, errors included, and the headers it needs', async () => {
    // A store of the suite may be shared with other files: an id of this run's own.
    const id = 9_000_000_000_000_000_000n + BigInt(Date.now());
    const created = await t.inject({
      method: 'POST',
      path: '/plants',
      headers: { ...fromPage(), 'content-type': 'application/json' },
      body: `{"id":${id},"name":"Fern","tag":"shade"}`,
    });
    assert.equal(created.status, 200);
    readable(created);
    for (const header of ['ETag', 'Change-Position', 'RateLimit-Remaining', 'X-Request-Id']) {
      assert.ok(EXPOSED_HEADERS.split(', ').includes(header), header);
    }
    const stale = await t.inject({
      method: 'PUT',
      path: `/plants/${id}`,
      headers: { ...fromPage(), 'content-type': 'application/json', 'if-match': '"stale"' },
      body: '{"name":"Fern","tag":"shade"}',
    });
    assert.equal(stale.status, 412);
    readable(stale);
    const unauthenticated = await t.inject({ path: '/plants', headers: { origin: PAGE } });
    assert.equal(unauthenticated.status, 401);
    readable(unauthenticated);
    const missing = await t.inject({ path: '/plants/1', headers: fromPage(OTHER_PAGE) });
    assert.equal(missing.status, 404);
    readable(missing, OTHER_PAGE);
    const notAllowed = await t.inject({ method: 'PATCH', path: '/plants', headers: fromPage() });
    assert.equal(notAllowed.status, 405);
    readable(notAllowed);
    // Refused before routing: a page reads why too (found by an audit).
    const badUrl = await t.inject({ path: '/plants/%zz', headers: fromPage() });
    assert.equal(badUrl.status, 400);
    readable(badUrl);
    // The same URL answers pages and streams: both Accept and Origin vary it.
    const changes = await t.inject({ path: '/plants/changes', headers: fromPage() });
    assert.equal(changes.status, 200);
    assert.deepEqual(String(changes.headers.vary).split(', ').sort(), ['Accept', 'Origin']);
  });

  it('lets a page read a 429', async () => {
    const limited = await buildTestApp({ env: { CORS_ORIGINS: PAGE, RATE_LIMIT_PER_WINDOW: '1' } });
    try {
      const headers = { authorization: `Bearer ${limited.token}`, origin: PAGE };
      await limited.inject({ path: '/plants', headers });
      const refused = await limited.inject({ path: '/plants', headers });
      assert.equal(refused.status, 429);
      readable(refused);
    } finally {
      await limited.close();
    }
  });

  it('opens a stream to a page with the same headers', async () => {
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = request(`${base}/plants/changes`, { headers: { ...fromPage(), accept: 'text/event-stream' } });
      req.on('error', reject);
      req.on('response', resolve);
      req.end();
    });
    res.destroy();
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], PAGE);
    assert.equal(res.headers['access-control-expose-headers'], EXPOSED_HEADERS);
    assert.deepEqual(String(res.headers.vary).split(', ').sort(), ['Accept', 'Origin']);
  });

  it("answers a preflight for every path of the plant API at once, with no credential, with the path's methods", async () => {
    // Every path of the document under /plants, each with every method it has: a path the
    // document gains is tried without this test knowing of it.
    const paths = loadDocument().paths.filter((p) => p.path.startsWith('/plants'));
    assert.ok(paths.some((p) => p.path === '/plants/changes/tickets'));
    const tried = paths.flatMap(({ path, methods }) =>
      methods.map((method) => [path.replace('{id}', '42'), methods.join(', '), method] as const),
    );
    for (const [path, methods, method] of tried) {
      const res = await t.inject({
        method: 'OPTIONS',
        path,
        headers: {
          origin: PAGE,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization, content-type, if-match',
        },
      });
      assert.equal(res.status, 204, `${path}: ${res.text}`);
      assert.equal(res.text, '');
      assert.equal(res.headers['access-control-allow-origin'], PAGE);
      assert.deepEqual(
        String(res.headers['access-control-allow-methods']).split(', ').sort(),
        methods.split(', ').sort(),
      );
      assert.equal(res.headers['access-control-allow-headers'], ALLOWED_HEADERS);
      assert.equal(res.headers['access-control-max-age'], String(PREFLIGHT_MAX_AGE_S));
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
      assert.match(String(res.headers.vary), /Origin/);
    }
  });

  it('gives any other origin no CORS header, and refuses its preflight with 403', async () => {
    // Near misses of an allowed origin, as an attacker would send them.
    for (const origin of [
      `${PAGE}/`,
      'HTTP://127.0.0.1:5173',
      'http://127.0.0.1:51730',
      'http://127.0.0.1',
      'https://127.0.0.1:5173',
      'http://127.0.0.1:5173.attacker',
      'null',
      '',
    ]) {
      const get = await t.inject({ path: '/plants', headers: fromPage(origin) });
      assert.equal(get.status, 200);
      assert.equal(get.headers['access-control-allow-origin'], undefined, origin);
      assert.equal(get.headers['access-control-expose-headers'], undefined, origin);
      const preflight = await t.inject({
        method: 'OPTIONS',
        path: '/plants',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      assert.equal(preflight.status, 403, `${JSON.stringify(origin)}: ${preflight.text}`);
      assert.equal(preflight.headers['access-control-allow-origin'], undefined);
      assert.match(preflight.text, /may not call this API \(CORS_ORIGINS\)/);
    }
  });

  it("sends none on the operators' endpoints and this server's own pages", async () => {
    for (const path of [
      '/healthz',
      '/readyz',
      '/metrics',
      '/openapi.json',
      '/docs',
      '/console',
      '/console/console.js',
    ]) {
      const get = await t.inject({ path, headers: fromPage() });
      assert.deepEqual(
        corsHeaders(get).filter((h) => h !== 'vary'),
        [],
        path,
      );
      const preflight = await t.inject({
        method: 'OPTIONS',
        path,
        headers: { origin: PAGE, 'access-control-request-method': 'GET' },
      });
      assert.equal(preflight.status, 405, path);
      assert.equal(preflight.headers['access-control-allow-origin'], undefined, path);
    }
  });
});
