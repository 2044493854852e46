// Requests and errors: routing, the error body, the order of checks, x-request-id, the
// operational endpoints and the published OpenAPI document. In process, on both stores; the
// malformed-HTTP cases go through a real socket of the same app.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { parse } from 'yaml';
import { createToken } from '../../src/use-cases/create-token.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { POSTGRES_URL, stores, suiteOptions } from '../support/stores.js';
import { postPlant, send, type RawResponse } from '../support/http.js';

for (const store of stores) {
  describe(`requests and errors [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    /** The same app on a socket, for the bytes `inject` cannot send. */
    let url: string;
    /** A valid token with plants:read only. */
    let readOnly: string;

    before(async () => {
      server = await buildTestApp({ store });
      url = await server.listen();
      readOnly = (await createToken(server.services.store, { name: 'ro', scopes: ['plants:read'] })).token;
    });
    after(async () => {
      await server?.close();
    });

    const LEAKS = [
      /\n\s+at /,
      /node_modules/,
      /\/(work|tmp|home|usr|src|dist)\//,
      /\.(ts|js|mjs):\d+/,
      /fastify/i,
      /sqlite/i,
      /postgres/i,
      /\bajv\b/i,
      /FST_/,
      /stack/i,
    ];

    function assertErrorBody(r: RawResponse, status: number): void {
      assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text}`);
      assert.match(String(r.headers['content-type']), /^application\/json(;|$)/);
      const body = r.json as Record<string, unknown>;
      assert.ok(body && typeof body === 'object', r.text);
      assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], r.text);
      assert.equal(body.error, status);
      assert.equal(typeof body.message, 'string');
      assert.ok((body.message as string).length > 0);
      for (const leak of LEAKS) assert.doesNotMatch(r.text, leak, `${status} body leaks internals: ${r.text}`);
    }

    const big = (n: number) => `{"id":1,"name":"x","pad":"${'a'.repeat(n)}"}`;

    describe('routing', () => {
      for (const path of ['/nope', '/plantz', '/plants/extra/segments', '/', '/PLANTS']) {
        it(`unknown path ${path} is 404`, async () => {
          assertErrorBody(await send(server, { path }), 404);
          assertErrorBody(
            await send(server, { method: 'POST', path, headers: { authorization: `Bearer ${server.token}` } }),
            404,
          );
        });
      }

      for (const method of ['PATCH', 'DELETE', 'PUT']) {
        it(`${method} /plants is 405 with Allow: GET, HEAD, POST`, async () => {
          const r = await send(server, { method, path: '/plants' });
          assertErrorBody(r, 405);
          assert.equal(r.headers.allow, 'GET, HEAD, POST');
        });
      }

      for (const method of ['POST', 'OPTIONS']) {
        it(`${method} /plants/{id} is 405 with Allow: GET, HEAD, PUT, DELETE, PATCH`, async () => {
          const r = await send(server, { method, path: '/plants/1' });
          assertErrorBody(r, 405);
          assert.equal(r.headers.allow, 'GET, HEAD, PUT, DELETE, PATCH');
        });
      }

      it('404 and 405 come before authentication', async () => {
        const variants: Record<string, string>[] = [
          {},
          { authorization: 'Bearer not-a-known-token-at-all' },
          { authorization: 'Basic eDp5' },
        ];
        for (const headers of variants) {
          const a = await send(server, { path: '/nope', headers });
          assertErrorBody(a, 404);
          assert.equal(a.headers['www-authenticate'], undefined);
          const b = await send(server, { method: 'DELETE', path: '/plants', headers });
          assertErrorBody(b, 405);
          assert.equal(b.headers['www-authenticate'], undefined);
        }
      });

      it('/healthz and /readyz answer 200 without a token; /readyz names the PostgreSQL primary', async () => {
        const primary = store === 'postgres' ? { primary: new URL(POSTGRES_URL).host } : {};
        for (const [path, body] of [
          ['/healthz', { status: 'ok' }],
          ['/readyz', { status: 'ok', ...primary }],
        ] as const) {
          const r = await send(server, { path });
          assert.equal(r.status, 200, r.text);
          assert.deepEqual(r.json, body);
        }
      });
    });

    describe('every non-2xx is the Error body and leaks nothing', () => {
      it('for each kind of failure', async () => {
        const t = server.token;
        const cases: [number, Promise<RawResponse>][] = [
          [404, send(server, { path: '/does/not/exist?x=1' })],
          [405, send(server, { method: 'PATCH', path: '/plants' })],
          [401, postPlant(server, undefined, '{"id":1,"name":"x"}')],
          [401, postPlant(server, 'unknown-token-value-123456', '{"id":1,"name":"x"}')],
          [403, postPlant(server, readOnly, '{"id":1,"name":"x"}')],
          [415, postPlant(server, t, '{"id":1,"name":"x"}', { 'content-type': 'text/plain' })],
          [413, postPlant(server, t, big(20_000))],
          [400, postPlant(server, t, '{"id":1,')],
          [400, postPlant(server, t, '{"id":1,"name":"x"}garbage')],
          [400, postPlant(server, t, '{"id":"1","name":"x"}')],
          [400, postPlant(server, t, '{"id":1,"name":""}')],
          [400, postPlant(server, t, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))],
          [400, postPlant(server, t, '{"id":1,"name":"\\ud800"}')],
        ];
        for (const [status, response] of cases) assertErrorBody(await response, status);
        // A conflict, for the 409.
        assert.equal((await postPlant(server, t, '{"id":42,"name":"a"}')).status, 200);
        assertErrorBody(await postPlant(server, t, '{"id":42,"name":"b"}'), 409);
      });
    });

    describe('the order of checks', () => {
      it('no token + bad content type is 401, not 415', async () => {
        const r = await postPlant(server, undefined, '{"id":1,"name":"x"}', { 'content-type': 'text/plain' });
        assertErrorBody(r, 401);
      });

      it('no token + oversize body is 401, not 413', async () => {
        assertErrorBody(await postPlant(server, undefined, big(20_000)), 401);
        assertErrorBody(
          await postPlant(server, undefined, big(20_000), { 'content-length': String(big(20_000).length) }),
          401,
        );
      });

      it('no token + invalid JSON is 401, not 400', async () => {
        assertErrorBody(await postPlant(server, undefined, '{nope'), 401);
      });

      it('a token without the scope + bad JSON is 403, not 400', async () => {
        assertErrorBody(await postPlant(server, readOnly, '{nope'), 403);
        assertErrorBody(await postPlant(server, readOnly, '{"id":1}', { 'content-type': 'text/plain' }), 403);
      });

      it('bad content type + oversize body is 415, not 413', async () => {
        assertErrorBody(await postPlant(server, server.token, big(20_000), { 'content-type': 'text/plain' }), 415);
      });

      it('oversize + invalid JSON is 413, not 400', async () => {
        assertErrorBody(await postPlant(server, server.token, `{${'x'.repeat(20_000)}`), 413);
      });

      it('invalid JSON on an existing id is 400, not 409', async () => {
        assert.equal((await postPlant(server, server.token, '{"id":43,"name":"a"}')).status, 200);
        assertErrorBody(await postPlant(server, server.token, '{"id":43,"name":"b","name":"c"}'), 400);
      });
    });

    describe('x-request-id', () => {
      const ID = /^[A-Za-z0-9._:-]{1,128}$/;

      it('a valid incoming id is echoed', async () => {
        for (const id of ['abc', 'A-Z.a_z:09', 'x'.repeat(128)]) {
          const r = await send(server, { path: '/healthz', headers: { 'x-request-id': id } });
          assert.equal(r.headers['x-request-id'], id);
        }
      });

      it('an invalid incoming id is replaced by a generated one', async () => {
        for (const id of ['x'.repeat(129), 'has space', 'a/b', 'semi;colon', 'quote"d', 'é']) {
          const r = await send(server, { path: '/healthz', headers: { 'x-request-id': id } });
          const got = r.headers['x-request-id'];
          assert.equal(typeof got, 'string');
          assert.notEqual(got, id);
          assert.match(got as string, ID);
        }
      });

      it('is on every response: 200, 400, 401, 403, 404, 405, 409, 413, 415', async () => {
        const t = server.token;
        assert.equal((await postPlant(server, t, '{"id":44,"name":"a"}')).status, 200);
        const responses = await Promise.all([
          send(server, { path: '/healthz' }),
          postPlant(server, t, '{"id":1,'),
          postPlant(server, undefined, '{"id":1,"name":"x"}'),
          postPlant(server, readOnly, '{"id":1,"name":"x"}'),
          send(server, { path: '/nope' }),
          send(server, { method: 'PATCH', path: '/plants' }),
          postPlant(server, t, '{"id":44,"name":"zzz"}'),
          postPlant(server, t, big(20_000)),
          postPlant(server, t, '{}', { 'content-type': 'text/plain' }),
        ]);
        assert.deepEqual(
          responses.map((r) => r.status),
          [200, 400, 401, 403, 404, 405, 409, 413, 415],
        );
        for (const r of responses) assert.match(String(r.headers['x-request-id']), ID, `status ${r.status}`);
        const echoed = await send(server, { path: '/nope', headers: { 'x-request-id': 'mine-404' } });
        assert.equal(echoed.headers['x-request-id'], 'mine-404');
        const echoed401 = await postPlant(server, undefined, '{}', { 'x-request-id': 'mine-401' });
        assert.equal(echoed401.headers['x-request-id'], 'mine-401');
        const echoed400 = await postPlant(server, t, '{', { 'x-request-id': 'mine-400' });
        assert.equal(echoed400.headers['x-request-id'], 'mine-400');
      });
    });

    describe('GET /openapi.json', () => {
      it('is the repository document, OpenAPI 3.1.0, with the seed names', async () => {
        const r = await send(server, { path: '/openapi.json' });
        assert.equal(r.status, 200);
        assert.match(String(r.headers['content-type']), /^application\/json(;|$)/);
        const yamlDoc = parse(
          readFileSync(new URL('../../openapi/plant-store.yaml', import.meta.url), 'utf8'),
        ) as unknown;
        assert.deepEqual(r.json, JSON.parse(JSON.stringify(yamlDoc)));
        const doc = r.json as {
          openapi: string;
          info: { version: string; license: { name: string } };
          paths: Record<string, Record<string, unknown>>;
          components: {
            schemas: Record<
              string,
              { required?: string[]; properties?: Record<string, { type?: string; format?: string }> }
            >;
            securitySchemes: Record<string, { type: string; scheme: string }>;
          };
        };
        assert.equal(doc.openapi, '3.1.0');
        assert.equal(doc.info.version, '1.0.0');
        assert.equal(doc.info.license.name, 'MIT');
        for (const name of ['Plant', 'NewPlant', 'Error']) assert.ok(doc.components.schemas[name], `schema ${name}`);
        assert.deepEqual(doc.components.schemas.Plant!.required, ['name']);
        assert.deepEqual([...doc.components.schemas.Error!.required!].sort(), ['error', 'message']);
        assert.equal(doc.components.schemas.Error!.properties!.error!.format, 'int32');
        assert.equal(doc.components.securitySchemes.bearerAuth?.type, 'http');
        assert.equal(doc.components.securitySchemes.bearerAuth?.scheme.toLowerCase(), 'bearer');
        assert.ok(doc.paths['/plants']?.post, 'POST /plants is documented');
      });

      it('needs no token', async () => {
        const r = await send(server, {
          path: '/openapi.json',
          headers: { authorization: 'Bearer unknown-token-0000000000' },
        });
        assert.equal(r.status, 200);
      });
    });

    describe('malformed HTTP', () => {
      function raw(bytes: string): Promise<string> {
        return new Promise((resolve, reject) => {
          const socket = connect(Number(new URL(url).port), '127.0.0.1');
          let data = '';
          const timer = setTimeout(
            () => socket.destroy(new Error(`no answer in 5 s; got ${JSON.stringify(data)}`)),
            5000,
          );
          socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
          socket.on('error', (err) => (data ? resolve(data) : reject(err)));
          socket.on('close', () => {
            clearTimeout(timer);
            resolve(data);
          });
          socket.write(bytes);
        });
      }

      function parseRaw(text: string) {
        const [head = '', body = ''] = text.split('\r\n\r\n');
        const [statusLine = '', ...lines] = head.split('\r\n');
        const headers = Object.fromEntries(
          lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
        );
        return { status: Number(statusLine.split(' ')[1]), headers, body };
      }

      for (const [what, bytes] of [
        ['a garbage request line', 'GARBAGE / HTTP/1.1\r\n\r\n'],
        ['a non-numeric Content-Length', 'POST /plants HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
        ['a bad header line', 'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'],
      ] as const) {
        it(`${what} gets a 400 with a JSON Error body`, async () => {
          const res = parseRaw(await raw(bytes));
          assert.equal(res.status, 400, JSON.stringify(res));
          assert.match(res.headers['content-type'] ?? '', /^application\/json(;|$)/);
          const body = JSON.parse(res.body) as Record<string, unknown>;
          assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
          assert.equal(body.error, 400);
          for (const leak of LEAKS) assert.doesNotMatch(res.body, leak);
        });
      }

      it('the 400 for a malformed request also carries x-request-id, like every response', async () => {
        const res = parseRaw(await raw('GARBAGE / HTTP/1.1\r\n\r\n'));
        assert.equal(res.status, 400);
        assert.match(res.headers['x-request-id'] ?? '', /^[A-Za-z0-9._:-]{1,128}$/, JSON.stringify(res.headers));
      });
    });
  });
}
