// The server's life as a process (first start, durability, operating it): the bootstrap token it
// prints, SIGTERM drain, SIGKILL under write load, and slow clients. Each test starts its own
// servers, because each is about a start, a stop or a config. Those that depend on the store run
// on every store; signals and slow clients run on SQLite only. What a clean restart keeps
// (plants, a revoked token) is shown in-process: restart.test.ts.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp } from '../helper.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { heldPost } from '../support/held-request.js';
import { postPlant, send } from '../support/http.js';
import { readStoredPlantsAt } from '../support/db.js';
import { createTestStore, stores, suiteOptions, type StoreKind, type TestStore } from '../support/stores.js';

const created: TestStore[] = [];
const servers: ServerProcess[] = [];
after(async () => {
  for (const s of servers) await s.dispose();
  await Promise.all(created.map((s) => s.drop()));
});

/** A fresh store that outlives the servers started on it (restarts): a SQLite file or a PostgreSQL schema. */
function freshStore(store: StoreKind): string {
  const s = createTestStore(store);
  created.push(s);
  return s.databaseUrl;
}

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
      it('first start without PLANT_STORE_TOKEN prints one token on stderr, and it works; a restart prints none', async () => {
        const databaseUrl = freshStore(store);
        const first = await start({ databaseUrl, env: { PLANT_STORE_TOKEN: undefined } });
        assert.ok(
          await eventually(() => /pst_[A-Za-z0-9_-]{43}/.test(first.stderr.join('\n')), 2000),
          first.stderr.join('\n'),
        );
        const printed = [...new Set(first.stderr.join('\n').match(TOKEN))];
        assert.equal(printed.length, 1, `expected one token, got ${printed.length}`);
        const token = printed[0]!;
        assert.ok(!first.stdout.join('\n').includes(token), 'the token is in the stdout log');
        assert.equal((await postPlant(first.url, token, '{"id":1,"name":"first"}')).status, 200);
        // The helper's own token was never registered.
        assert.equal((await postPlant(first.url, first.token, '{"id":2,"name":"x"}')).status, 401);
        assert.equal(await first.stop(), 0);

        const second = await start({ databaseUrl, env: { PLANT_STORE_TOKEN: undefined } });
        assert.equal((await postPlant(second.url, token, '{"id":3,"name":"second"}')).status, 200);
        // Once it has exited, everything it wrote has been read.
        assert.equal(await second.stop(), 0);
        assert.deepEqual(second.stderr.join('\n').match(TOKEN), null, second.stderr.join('\n'));
      });

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

    describe('SIGKILL under write load', () => {
      it('every acknowledged write survives', async (t) => {
        const databaseUrl = freshStore(store);
        const s = await start({ databaseUrl });
        const acknowledged = new Map<number, string>();
        let stop = false;
        let next = 1;
        const worker = async () => {
          for (let i = 0; i < 100_000 && !stop; i++) {
            const id = next++;
            const name = `crash-${id}`;
            try {
              const r = await postPlant(s.url, s.token, `{"id":${id},"name":"${name}"}`);
              if (r.status === 200) acknowledged.set(id, name);
            } catch {
              return; // the connection died with the process
            }
          }
        };
        const workers = Array.from({ length: 8 }, worker);
        // Killed in the middle of the load: once some hundreds of writes are acknowledged, others in flight.
        assert.ok(await eventually(() => acknowledged.size >= 300, 10_000), `${acknowledged.size} acknowledged`);
        await s.kill();
        stop = true;
        await Promise.all(workers);
        assert.ok(acknowledged.size > 0, 'no write was acknowledged before the kill');
        t.diagnostic(`${acknowledged.size} writes acknowledged before SIGKILL`);

        const rows = new Map((await readStoredPlantsAt(databaseUrl)).map((p) => [p.id, p]));
        const lost = [...acknowledged].filter(([id, name]) => rows.get(BigInt(id))?.name !== name);
        assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.size} acknowledged writes were lost`);
        // Served again (in-process: the process killed is the subject, not the one after), the
        // store agrees: identical retries are 200.
        const again = await buildTestApp({ databaseUrl, token: s.token });
        try {
          for (const [id, name] of [...acknowledged].slice(-5)) {
            assert.equal((await postPlant(again, again.token, `{"id":${id},"name":"${name}"}`)).status, 200);
          }
        } finally {
          await again.close();
        }
      });
    });
  });
}

// Signal handling and HTTP timeouts do not depend on the store: SQLite only.
describe('SIGINT', () => {
  it('drains and exits 0 like SIGTERM', async () => {
    const s = await start();
    assert.equal((await postPlant(s.url, s.token, '{"id":1,"name":"x"}')).status, 200);
    const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)));
    s.proc.kill('SIGINT');
    assert.equal(await exited, 0);
  });
});

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
