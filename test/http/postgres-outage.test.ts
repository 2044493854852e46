import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listAllPlants, postPlant, send, type RawResponse } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { createTestStore, POSTGRES_URL, suiteOptions, type TestStore } from '../support/stores.js';
import { TcpProxy } from '../support/tcp-proxy.js';

describe('PostgreSQL unreachable, then back', suiteOptions('postgres'), () => {
  let db: TestStore;
  let proxy: TcpProxy;
  let server: ServerProcess;
  const acked = new Map<bigint, string>();
  let nextId = 1n;

  const auth = () => ({ authorization: `Bearer ${server.token}` });
  const create = async () => {
    const id = nextId++;
    const res = await postPlant(server.url, server.token, `{"id":${id},"name":"p${id}"}`);
    if (res.status === 200) acked.set(id, `p${id}`);
    return res;
  };
  const ready = async () => (await send(server.url, { path: '/readyz' })).status === 200;

  before(async () => {
    db = createTestStore('postgres');
    const target = new URL(POSTGRES_URL);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    // The server reaches PostgreSQL only through the proxy, so cutting it touches no one else.
    const viaProxy = new URL(db.databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    server = await startServer({ databaseUrl: viaProxy.toString() });
  });
  after(async () => {
    await server?.dispose();
    await proxy?.close();
    await db?.drop();
  });

  for (const [mode, limitMs] of [
    // New connections are refused and live ones closed: noticed at once.
    ['refuse', 5_000],
    // Bytes vanish and nothing is closed: each operation's budget (a connection's time-out within
    // it) bounds the wait, as docs/guides/scaling-out.md promises.
    ['blackhole', 5_000],
  ] as const) {
    it(`answers 503 with Retry-After within ${limitMs / 1000} s while the link is cut (${mode}), and recovers without a restart`, async () => {
      for (let i = 0; i < 5; i++) assert.equal((await create()).status, 200);

      proxy.cut(mode);
      const started = Date.now();
      const during: RawResponse[] = await Promise.all([
        create(),
        create(),
        send(server.url, { path: '/plants/1', headers: auth() }),
        send(server.url, { path: '/plants', headers: auth() }),
        send(server.url, { path: '/readyz' }),
      ]);
      const elapsed = Date.now() - started;
      for (const res of during) {
        assert.equal(res.status, 503, res.text);
        assert.match(String(res.headers['retry-after']), /^[1-9][0-9]*$/);
        assert.deepEqual(res.json, { error: 503, message: 'the store is unavailable; retry later' });
      }
      assert.ok(elapsed < limitMs, `answered within ${limitMs} ms (took ${elapsed} ms)`);
      assert.equal(server.proc.exitCode, null, 'the server is still running');

      proxy.restore();
      assert.ok(await pollUntil(ready, 10_000, 100), '/readyz is 200 again within 10 s of the link returning');
      for (let i = 0; i < 5; i++) assert.equal((await create()).status, 200);
    });
  }

  it('lost nothing it acknowledged', async () => {
    assert.ok(acked.size >= 20);
    const stored = new Map((await listAllPlants(server.url, server.token)).map((p) => [p.id, p.name]));
    for (const [id, name] of acked) assert.equal(stored.get(id), name, `plant ${id}`);
  });
});
