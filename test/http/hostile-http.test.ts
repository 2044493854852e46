// Requests an attacker sends: bodies where none is taken, Content-Type without a body, huge
// declared bodies on refused requests, Expect headers, CONNECT, HTTP/1.1 without Host, on the
// API port and on the METRICS_PORT listener. Every answer is the Error shape with x-request-id;
// a refused request's body is never read. The socket cases use the same app on a real socket.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../helper.js';
import { assertConforms, postPlant, send } from '../support/http.js';
import { firstResponse, open } from '../support/raw-connection.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const store of stores) {
  describe(
    `operations without a body ignore Content-Type when there is no body [${store}]`,
    suiteOptions(store),
    () => {
      let server: TestApp;
      before(async () => {
        server = await buildTestApp({ store });
      });
      after(async () => {
        await server?.close();
      });
      const auth = () => ({ authorization: `Bearer ${server.token}` });
      let id = 100;
      const plant = async () => {
        const n = id++;
        assert.equal((await postPlant(server, server.token, `{"id":${n},"name":"p"}`)).status, 200);
        return n;
      };

      for (const headers of [
        { 'content-type': 'application/json' },
        { 'content-type': 'application/json', 'content-length': '0' },
        { 'content-type': 'application/json', 'content-length': '00' },
        { 'content-type': 'text/plain' },
        { 'content-type': 'text/plain', 'content-length': '0' },
        { 'content-type': 'nonsense/x;;;' },
        { 'content-type': 'application/json; charset=latin1' },
      ] as Record<string, string>[]) {
        it(`DELETE with ${JSON.stringify(headers)} and no body deletes (204)`, async () => {
          const n = await plant();
          const r = await send(server, { method: 'DELETE', path: `/plants/${n}`, headers: { ...auth(), ...headers } });
          assert.equal(r.status, 204, r.text);
          assert.equal((await send(server, { path: `/plants/${n}`, headers: auth() })).status, 404);
        });

        it(`GET with ${JSON.stringify(headers)} and no body answers as usual`, async () => {
          const n = await plant();
          const r = await send(server, { path: `/plants/${n}`, headers: { ...auth(), ...headers } });
          assert.equal(r.status, 200, r.text);
          assert.equal((await send(server, { path: '/healthz', headers })).status, 200);
        });
      }

      it('a body on DELETE or GET is 400 "takes no request body", and the plant stays', async () => {
        const n = await plant();
        for (const [method, path] of [
          ['DELETE', `/plants/${n}`],
          ['GET', `/plants/${n}`],
          ['GET', '/plants'],
          ['GET', '/healthz'],
        ] as const) {
          for (const headers of [
            { 'content-type': 'application/json' },
            { 'content-type': 'text/plain' },
            {},
          ] as Record<string, string>[]) {
            const r = await send(server, { method, path, headers: { ...auth(), ...headers }, body: '{}' });
            assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
            assert.match((r.json as { message: string }).message, /takes no request body/);
          }
        }
        assert.equal((await send(server, { path: `/plants/${n}`, headers: auth() })).status, 200);
      });

      it('POST and PUT still require their body', async () => {
        const json = { ...auth(), 'content-type': 'application/json' };
        assert.equal((await send(server, { method: 'POST', path: '/plants', headers: json })).status, 400);
        assert.equal((await send(server, { method: 'PUT', path: '/plants/1', headers: json })).status, 400);
      });

      it('413 states the limit', async () => {
        const r = await postPlant(server, server.token, `{"id":1,"name":"${'x'.repeat(20_000)}"}`);
        assert.equal(r.status, 413);
        assert.equal((r.json as { message: string }).message, 'request body is larger than the limit of 16384 bytes');
      });
    },
  );
}

/** The first complete response in `text` (after any 1xx), as the conformance check reads it. */
function assertErrorShape(res: ReturnType<typeof firstResponse>, status: number, method: string, path: string) {
  assert.equal(res.status, status, JSON.stringify(res));
  assert.match(res.headers['content-type'] ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(res.json as object).sort(), ['error', 'message']);
  assert.equal((res.json as { error: number }).error, status);
  assert.match(res.headers['x-request-id'] ?? '', /^[A-Za-z0-9._:-]{1,128}$/);
  assertConforms(method, path, res);
}

describe('on a real socket (SQLite only: the store plays no part)', () => {
  let server: TestApp;
  let port: number;
  let metricsPort: number;
  before(async () => {
    server = await buildTestApp({ env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' } });
    port = Number(new URL(await server.listen()).port);
    metricsPort = Number(new URL(server.app.metricsListener!.url).port);
  });
  after(async () => {
    await server?.close();
  });

  describe('a refused request costs no body', () => {
    for (const [what, headers] of [
      ['no credential', ''],
      ['an unknown token', 'Authorization: Bearer pst_unknownunknownunknownunknownunknownunknownun\r\n'],
      ['a bad content type', 'AUTH\r\nContent-Type: text/plain\r\n'],
    ] as const) {
      it(`${what} + Content-Length: 200000000: the answer comes, then the server closes, having read a few bytes`, async () => {
        const c = open(port);
        const h = headers.replace('AUTH', `Authorization: Bearer ${server.token}`);
        c.socket.write(
          `POST /plants HTTP/1.1\r\nHost: x\r\n${h}${h.includes('Content-Type') ? '' : 'Content-Type: application/json\r\n'}` +
            'Content-Length: 200000000\r\n\r\n{"id":1,',
        );
        const took = await c.ended;
        const res = firstResponse(c.data());
        assertErrorShape(res, what === 'a bad content type' ? 415 : 401, 'POST', '/plants');
        assert.equal(res.headers.connection, 'close');
        assert.ok(took < 3000, `closed after ${took} ms`);
        assert.equal(c.data().match(/HTTP\/1\.1 /g)?.length, 1, 'one response, never a second (408) one');
        c.socket.destroy();
      });
    }

    it('a slow sender gets one answer and a closed connection, not a 408 later', async () => {
      const c = open(port);
      c.socket.write(
        'POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
      );
      await c.waitFor('\r\n\r\n{"error":401');
      const timer = setInterval(() => c.socket.writable && c.socket.write('x'), 100);
      await c.ended;
      clearInterval(timer);
      assert.equal(c.data().match(/HTTP\/1\.1 /g)?.length, 1, c.data());
      c.socket.destroy();
    });

    it('a request answered after its body was read (409) keeps its connection', async () => {
      assert.equal((await postPlant(server, server.token, '{"id":7100,"name":"a"}')).status, 200);
      const c = open(port);
      const body = '{"id":7100,"name":"b"}';
      c.socket.write(
        `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      await c.waitFor('"error":409');
      assert.notEqual(firstResponse(c.data()).headers.connection, 'close');
      c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.waitFor('{"status":"ok"}');
      c.socket.destroy();
    });
  });

  describe('Expect: 100-continue is answered only to an accepted request', () => {
    const ask = (auth: boolean, type: string, length: number) =>
      `POST /plants HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: Bearer ${server.token}\r\n` : ''}` +
      `Content-Type: ${type}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

    it('no credential: 401 at once, no 100 Continue, connection closed', async () => {
      const c = open(port);
      c.socket.write(ask(false, 'application/json', 20));
      await c.ended;
      assert.doesNotMatch(c.data(), /100 Continue/);
      assertErrorShape(firstResponse(c.data()), 401, 'POST', '/plants');
    });

    it('a bad content type or a declared size over the limit: 415 or 413, no 100 Continue', async () => {
      for (const [type, length, status] of [
        ['text/plain', 20, 415],
        ['application/json', 200_000_000, 413],
      ] as const) {
        const c = open(port);
        c.socket.write(ask(true, type, length));
        await c.ended;
        assert.doesNotMatch(c.data(), /100 Continue/);
        const res = firstResponse(c.data());
        assertErrorShape(res, status, 'POST', '/plants');
        if (status === 413) assert.match(res.text, /limit of 16384 bytes/);
      }
    });

    it('two Content-Type fields: 400 before the body, whichever comes first', async () => {
      for (const types of [
        ['application/json', 'text/plain'],
        ['text/plain', 'application/json'],
        ['application/json', 'application/json'],
      ]) {
        const c = open(port);
        const fields = types.map((t) => `Content-Type: ${t}\r\n`).join('');
        c.socket.write(
          `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n${fields}` +
            'Content-Length: 20\r\nExpect: 100-continue\r\n\r\n',
        );
        await c.ended;
        assert.doesNotMatch(c.data(), /100 Continue/);
        const res = firstResponse(c.data());
        assertErrorShape(res, 400, 'POST', '/plants');
        assert.match(res.text, /Content-Type is given more than once/);
      }
    });

    it('two Authorization fields: 400, whichever comes first (Node keeps the first; no guessing)', async () => {
      for (const tokens of [
        [server.token, 'pst_other'],
        ['pst_other', server.token],
        [server.token, server.token],
      ]) {
        const c = open(port);
        const fields = tokens.map((t) => `Authorization: Bearer ${t}\r\n`).join('');
        c.socket.write(`GET /plants HTTP/1.1\r\nHost: x\r\n${fields}Connection: close\r\n\r\n`);
        await c.ended;
        const res = firstResponse(c.data());
        assertErrorShape(res, 400, 'GET', '/plants');
        assert.match(res.text, /Authorization header is given more than once/);
      }
    });

    it('an accepted request gets 100 Continue, then its answer', async () => {
      const body = '{"id":7001,"name":"continued"}';
      const c = open(port);
      c.socket.write(ask(true, 'application/json', body.length));
      await c.waitFor('HTTP/1.1 100 Continue\r\n\r\n');
      c.socket.write(body);
      await c.waitFor('"name":"continued"');
      assert.equal(firstResponse(c.data()).status, 200);
      c.socket.destroy();
    });
  });

  for (const [listener, getPort, path] of [
    ['API port', () => port, '/healthz'],
    ['METRICS_PORT listener', () => metricsPort, '/metrics'],
  ] as const) {
    describe(`what Node used to answer by itself, on the ${listener}`, () => {
      const exchange = async (bytes: string) => {
        const c = open(getPort());
        c.socket.write(bytes);
        await c.ended;
        return firstResponse(c.data());
      };

      it('HTTP/1.1 without Host: 400, Error shape, x-request-id', async () => {
        const res = await exchange(`GET ${path} HTTP/1.1\r\n\r\n`);
        assertErrorShape(res, 400, 'GET', path);
        assert.match(res.text, /Host header is required/);
      });

      it('two Host fields: 400, Error shape (Node kept the first)', async () => {
        for (const hosts of ['Host: a\r\nHost: b', 'Host: a\r\nHost: a', 'host: a\r\nHOST: b']) {
          const res = await exchange(`GET ${path} HTTP/1.1\r\n${hosts}\r\n\r\n`);
          assertErrorShape(res, 400, 'GET', path);
          assert.match(res.text, /Host header is given more than once/);
        }
      });

      it('HTTP/1.0 without Host is fine', async () => {
        const res = await exchange(`GET ${path} HTTP/1.0\r\n\r\n`);
        assert.equal(res.status, path === '/metrics' ? 200 : 200);
      });

      it('Expect: 200-ok: 417, Error shape', async () => {
        const res = await exchange(`GET ${path} HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n`);
        assertErrorShape(res, 417, 'GET', path);
      });

      it('CONNECT: 501, Error shape, instead of a dropped connection', async () => {
        const res = await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
        assertErrorShape(res, 501, 'CONNECT', '/example.com:443');
      });

      it('a malformed request: 400, Error shape', async () => {
        const res = await exchange('GARBAGE\r\n\r\n');
        assertErrorShape(res, 400, 'GET', path);
      });

      it('a request with a huge body it will not read: answered, then closed', async () => {
        const c = open(getPort());
        c.socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 200000000\r\n\r\nabc`);
        await c.ended;
        const res = firstResponse(c.data());
        assert.ok(res.status >= 400, c.data());
        assert.match(res.headers['x-request-id'] ?? '', /./);
        assert.equal(res.headers.connection, 'close');
      });
    });
  }

  it('the METRICS_PORT listener puts x-request-id on every answer', async () => {
    const base = server.app.metricsListener!.url;
    for (const p of ['/metrics', '/nope', `/${'x'.repeat(3000)}`]) {
      const r = await fetch(`${base}${p}`);
      assert.match(r.headers.get('x-request-id') ?? '', /^[A-Za-z0-9._:-]{1,128}$/, p);
      if (r.status !== 200) {
        const body = (await r.json()) as { error: number; message: string };
        assert.equal(body.error, r.status);
        assert.ok(body.message.length <= 1024);
      } else await r.text();
    }
  });
});
