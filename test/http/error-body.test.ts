// The one Error body (src/http/errors/error-body.ts) in each form it leaves in: the object Fastify
// serialises, a Node response, and the raw bytes written to a socket; and a bug's 500, the one
// answer of the error handler no other test reaches.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, get, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { errorBody, rawErrorResponse, writeError } from '../../src/http/errors/error-body.js';
import type { Store } from '../../src/store/store.js';
import { openStore } from '../../src/store/open-store.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

/** Not ASCII, so a length counted in characters rather than bytes shows. */
const MESSAGE = 'no route for GET /café…';

async function listening(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** One GET with Node's own client: its parser refuses framing that does not add up. */
function fetchRaw(
  port: number,
  path = '/',
): Promise<{ status: number; reason: string; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    get({ port, host: '127.0.0.1', path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, reason: res.statusMessage!, headers: res.headers, text }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('the Error body', () => {
  it('is {"error": <status>, "message": ...}, in that order', () => {
    assert.equal(JSON.stringify(errorBody(404, MESSAGE)), `{"error":404,"message":${JSON.stringify(MESSAGE)}}`);
  });

  it('on a Node response: its length in bytes, the JSON media type unless another is named, the headers given', async () => {
    const server = createServer((req, res) =>
      req.url === '/'
        ? writeError(res, 405, MESSAGE, { allow: 'GET, HEAD' })
        : writeError(res, 404, MESSAGE, { 'content-type': 'application/json' }),
    );
    try {
      const port = await listening(server);
      const res = await fetchRaw(port);
      assert.equal(res.status, 405);
      assert.deepEqual(JSON.parse(res.text), { error: 405, message: MESSAGE });
      assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.text)));
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.headers.allow, 'GET, HEAD');
      const other = await fetchRaw(port, '/other');
      assert.equal(other.status, 404);
      assert.equal(other.headers['content-type'], 'application/json');
      assert.equal(other.headers['content-length'], String(Buffer.byteLength(other.text)));
    } finally {
      server.close();
    }
  });

  it('as raw bytes on a socket: a whole HTTP/1.1 response that closes the connection', async () => {
    const server = createTcpServer((socket) => {
      socket.once('data', () => socket.end(rawErrorResponse(431, MESSAGE)));
    });
    try {
      const port = await listening(server);
      const res = await fetchRaw(port);
      assert.equal(res.status, 431);
      assert.equal(res.reason, 'Request Header Fields Too Large');
      assert.deepEqual(JSON.parse(res.text), { error: 431, message: MESSAGE });
      assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.text)));
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.headers['connection'], 'close');
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    } finally {
      server.close();
    }
  });
});

for (const store of stores) {
  describe(`a bug's answer [${store}]`, suiteOptions(store), () => {
    let db: TestStore;
    let real: Store;
    let server: TestApp;
    /** Once set, every method of the store throws what a bug would: a plain Error naming internals. */
    let broken = false;

    before(async () => {
      db = createTestStore(store);
      real = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 })).store;
      const faulty = new Proxy(real, {
        get(target, name) {
          const value: unknown = Reflect.get(target, name, target);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (broken) throw new Error(`a bug in /work/src/store/${String(name)}.ts:12`);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      server = await buildTestApp({ databaseUrl: db.databaseUrl, storeObject: faulty });
    });
    after(async () => {
      await server?.close();
      await real?.close();
      await db?.drop();
    });

    it('is 500 in the Error shape, naming the request id and nothing of the bug', async () => {
      broken = true;
      const res = await server.inject({ path: '/plants/1', headers: { authorization: `Bearer ${server.token}` } });
      broken = false;
      assert.equal(res.status, 500);
      assert.equal(
        res.text,
        `{"error":500,"message":"internal error (request id ${String(res.headers['x-request-id'])})"}`,
      );
    });
  });
}
