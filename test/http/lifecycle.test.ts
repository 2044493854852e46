// The server's life as a process (starting and operating it): the bootstrap token it prints,
// SIGTERM drain, and slow clients. Each test starts its own servers, because each is about a
// start, a stop or a config. Those that depend on the store run on every store; slow clients run
// on SQLite only. Elsewhere: the first token and a restart (cli/first-start.test.ts), SIGKILL
// under write load (crash.test.ts), each signal (cli/signals.test.ts), and what a clean restart
// keeps, in-process (restart.test.ts).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type ServerProcess } from '../support/server.js';
import { heldPost } from '../support/held-request.js';
import { postPlant, send } from '../support/http.js';
import { readStoredPlantsAt } from '../support/db.js';
import { stores, suiteOptions } from '../support/stores.js';

const servers: ServerProcess[] = [];
after(async () => {
  for (const s of servers) await s.dispose();
});

async function start(options: Parameters<typeof startServer>[0] = {}): Promise<ServerProcess> {
  const s = await startServer(options);
  servers.push(s);
  return s;
}

const TOKEN = /pst_[A-Za-z0-9_-]{43}/g;

async function eventually(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
}

for (const store of stores) {
  describe(`the server's life [${store}]`, suiteOptions(store), () => {
    describe('the bootstrap token', () => {
      it('PLANT_STORE_TOKEN registers that value and prints no token', async () => {
        const value = 'deploy-token.0123456789_abcdefXYZ';
        const s = await start({ store, token: value });
        assert.equal((await postPlant(s.url, value, '{"id":1,"name":"x"}')).status, 200);
        assert.equal((await postPlant(s.url, `${value}x`, '{"id":2,"name":"x"}')).status, 401);
        assert.equal(await s.stop(), 0);
        assert.deepEqual(s.stderr.join('\n').match(TOKEN), null);
        assert.ok(![...s.stdout, ...s.stderr].join('\n').includes(value), 'the configured token is in the logs');
        await s.dispose();
      });
    });

    describe('SIGTERM', () => {
      it('in-flight requests complete with 200 and the process exits 0', async () => {
        const s = await start({ store });
        let release!: () => void;
        const released = new Promise<void>((r) => (release = r));
        const ids = Array.from({ length: 10 }, (_, i) => 500 + i);
        const held = ids.map((id) => heldPost(s.url, s.token, `{"id":${id},"name":"drain"}`, released));
        // Every request's headers have reached the server (it answered 100 Continue).
        await Promise.all(held.map((h) => h.headersRead));
        const exited = s.stop();
        // The shutdown has begun (it says so) while every request is still held.
        assert.ok(await eventually(() => s.stdout.some((l) => /shutting down/.test(l)), 5000), s.stdout.join('\n'));
        release();
        const results = await Promise.all(held.map((h) => h.done));
        for (const r of results) assert.equal(r.status, 200, `in-flight request: ${r.status} ${r.text}`);
        assert.equal(await exited, 0);
        const stored = (await readStoredPlantsAt(s.databaseUrl)).map((p) => p.id);
        for (const id of ids) assert.ok(stored.includes(BigInt(id)), `plant ${id} was acknowledged but not stored`);
        // They really were in flight: the shutdown began before any of them was answered.
        const messages = s.stdout.map((l) => JSON.parse(l) as { msg?: string; url?: string });
        const shutdownAt = messages.findIndex((m) => /shutting down/.test(m.msg ?? ''));
        const firstAnswer = messages.findIndex((m) => m.msg === 'request' && m.url === '/plants');
        assert.ok(shutdownAt !== -1 && firstAnswer > shutdownAt, s.stdout.join('\n'));
      });
    });
  });
}

// Signal handling and HTTP timeouts do not depend on the store: SQLite only.
describe('slow clients', () => {
  function openStalled(url: string, bytes: string) {
    const socket: Socket = connect(Number(new URL(url).port), '127.0.0.1');
    const state = { data: '', closed: false };
    socket.on('data', (d: Buffer) => (state.data += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => (state.closed = true));
    socket.write(bytes);
    return { socket, state };
  }

  it('a stalled request line is answered 408 or closed, and others are served meanwhile', async (t) => {
    const s = await start({ env: { HEADERS_TIMEOUT_MS: '1000' } });
    const stalled = openStalled(s.url, 'POST /pla');
    const partial = openStalled(s.url, `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\n`);
    try {
      // While they stall, another client is served.
      const h = await send(s.url, { path: '/healthz' });
      assert.equal(h.status, 200);
      const p = await postPlant(s.url, s.token, '{"id":1,"name":"meanwhile"}');
      assert.equal(p.status, 200);

      const done = await eventually(
        () => [stalled, partial].every((c) => c.state.closed || /^HTTP\/1\.1 408/.test(c.state.data)),
        3500,
      );
      for (const c of [stalled, partial]) {
        t.diagnostic(
          `stalled connection: closed=${c.state.closed} answer=${JSON.stringify(c.state.data.split('\r\n')[0])}`,
        );
        assert.ok(
          done,
          `a stalled connection was neither answered nor closed within 3.5 s: ${JSON.stringify(c.state)}`,
        );
        if (c.state.data) {
          assert.match(c.state.data, /^HTTP\/1\.1 408 /);
          assert.match(c.state.data, /\r\n\r\n\{"error":408,"message":"[^"]+"\}$/);
        }
      }
      assert.equal((await send(s.url, { path: '/healthz' })).status, 200);
    } finally {
      stalled.socket.destroy();
      partial.socket.destroy();
      await s.dispose();
    }
  });
});
