// Rate limits (429): requests per token, and refused credentials per client
// address, with Retry-After and the RateLimit headers; both recover when their window ends.
// Small limits and a 4 s window are set through the environment; loops are bounded.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../src/domain/token.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant, send, type RawResponse, type Target } from '../support/http.js';
import { newToken } from '../support/server.js';
import { assert429 } from '../support/rate-limited.js';
import { stores, suiteOptions } from '../support/stores.js';

// Long enough that a handful of requests on loopback always fall in one window.
const WINDOW_SECONDS = 4;
let nextId = 1;
const body = () => `{"id":${nextId++},"name":"limited"}`;
const getPlants = (url: Target, authorization?: string) =>
  send(url, { path: '/plants', headers: authorization ? { authorization } : {} });

/** Sends until `done` holds, at most `max` times; returns every response. */
async function until(
  go: () => Promise<RawResponse>,
  done: (r: RawResponse) => boolean,
  max: number,
  pauseMs = 0,
): Promise<RawResponse[]> {
  const seen: RawResponse[] = [];
  while (seen.length < max) {
    const r = await go();
    seen.push(r);
    if (done(r)) break;
    if (pauseMs) await sleep(pauseMs);
  }
  return seen;
}

for (const store of stores) {
  describe(`rate limits [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    before(async () => {
      server = await buildTestApp({
        store,
        env: {
          RATE_LIMIT_PER_WINDOW: '5',
          AUTH_FAILURE_LIMIT_PER_WINDOW: '3',
          RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
        },
      });
    });
    after(async () => server?.close());

    it('counts requests per token: 429 past the limit, other tokens unaffected, then recovery', async () => {
      const other = (await createToken(server.services.store, { name: 'other' })).token;

      const seen = await until(
        () => postPlant(server, server.token, body()),
        (r) => r.status === 429,
        30,
      );
      const limited = seen.at(-1)!;
      assert429(limited, 5, WINDOW_SECONDS);
      assert.match((limited.json as { message: string }).message, /too many requests for this token/);
      const admitted = seen.filter((r) => r.status === 200);
      assert.ok(admitted.length >= 5, `the limit is 5 a window, yet only ${admitted.length} got through`);
      for (const r of admitted) {
        assert.equal(r.headers['ratelimit-limit'], '5');
        assert.ok(Number(r.headers['ratelimit-remaining']) <= 4);
        assert.ok(Number(r.headers['ratelimit-reset']) >= 1);
      }

      // Limited, the token gets 429 before its body's media type (415) or JSON (400) is looked at.
      assert429(await postPlant(server, server.token, '{}', { 'content-type': 'text/plain' }), 5, WINDOW_SECONDS);
      assert429(await postPlant(server, server.token, '{"id":'), 5, WINDOW_SECONDS);

      assert.equal((await postPlant(server, other, body())).status, 200, 'another token has its own count');

      const recovered = await until(
        () => postPlant(server, server.token, body()),
        (r) => r.status === 200,
        WINDOW_SECONDS * 15, // 100 ms apart: half again the window, whatever a request costs
        100,
      );
      assert.equal(recovered.at(-1)!.status, 200, 'the token works again once the window has passed');
    });

    it('counts refused credentials per address: 429 even for a valid token, then recovery', async () => {
      const seen = await until(
        () => getPlants(server, `Bearer ${newToken()}`),
        (r) => r.status === 429,
        20,
      );
      const limited = seen.at(-1)!;
      assert429(limited, 3, WINDOW_SECONDS);
      assert.match((limited.json as { message: string }).message, /too many refused credentials from this address/);
      assert.ok(seen.filter((r) => r.status === 401).length >= 3);
      for (const r of seen.slice(0, -1)) assert.equal(r.status, 401);

      // The address is blocked before any token is looked at, so guessing stops paying off.
      assert429(await getPlants(server, `Bearer ${server.token}`), 3, WINDOW_SECONDS);
      // A request without a credential is not an attempt: still the plain 401 challenge.
      assert.equal((await getPlants(server)).status, 401);

      const recovered = await until(
        () => getPlants(server, `Bearer ${server.token}`),
        (r) => r.status === 200,
        WINDOW_SECONDS * 15, // 100 ms apart: half again the window, whatever a request costs
        100,
      );
      assert.equal(recovered.at(-1)!.status, 200, 'the address may try again once the window has passed');
    });
  });

  describe(`rate limits with the defaults [${store}]`, suiteOptions(store), () => {
    it('do not limit a busy token, and missing credentials are not counted as failures', async () => {
      const server = await buildTestApp({ store });
      try {
        for (let i = 0; i < 100; i++) assert.equal((await getPlants(server)).status, 401);
        const r = await getPlants(server, `Bearer ${server.token}`);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.headers['ratelimit-limit'], '600000');
        const burst = await Promise.all(
          Array.from({ length: 200 }, () => postPlant(server, server.token, body()).then((x) => x.status)),
        );
        assert.deepEqual(new Set(burst), new Set([200]));
      } finally {
        await server.close();
      }
    });
  });
}

// Shared limits: two instances counting in one Redis. Needs redis-server (Debian's package);
// without it the test is skipped, except with CI=true, where it fails (.ci/run installs it).
const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));
const skip =
  !REDIS && process.env.CI !== 'true'
    ? 'redis-server is not installed (apt-get install -y redis-server); with CI=true this test fails instead'
    : false;

/** Resolves once something accepts connections on 127.0.0.1:port (bounded: 10 s). */
async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        resolve(true);
        socket.destroy();
      });
      socket.once('error', () => resolve(false));
      socket.once('close', () => resolve(false));
      socket.setTimeout(1000, () => socket.destroy());
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on 127.0.0.1:${port}`);
}

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const { port } = probe.address() as { port: number };
  await new Promise((r) => probe.close(r));
  return port;
}

for (const store of stores) {
  describe(`rate limits shared through Redis [${store}]`, { skip, ...suiteOptions(store) }, () => {
    let redis: ChildProcess | undefined;
    const servers: TestApp[] = [];
    let port = 0;

    before(async () => {
      assert.ok(REDIS, 'redis-server is not installed');
      port = await freePort();
      redis = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      const token = newToken();
      const env = {
        REDIS_URL: `redis://127.0.0.1:${port}`,
        RATE_LIMIT_PER_WINDOW: '6',
        AUTH_FAILURE_LIMIT_PER_WINDOW: '4',
      };
      await waitForPort(port);
      // Two instances of one store, as behind a load balancer.
      servers.push(await buildTestApp({ store, env, token }));
      servers.push(await buildTestApp({ databaseUrl: servers[0]!.databaseUrl, env, token }));
    });
    after(async () => {
      // The second instance first: the first one's close drops the store they share.
      for (const s of servers.reverse()) await s.close();
      redis?.kill('SIGKILL');
    });

    it('counts one token across instances', async () => {
      const [a, b] = servers as [TestApp, TestApp];
      const seen: RawResponse[] = [];
      for (let i = 0; i < 20 && seen.at(-1)?.status !== 429; i++) {
        seen.push(await postPlant(i % 2 ? b : a, a.token, body()));
      }
      assert429(seen.at(-1)!, 6, 60);
      assert.equal(seen.length, 7, 'six requests over two instances, then 429');
      // The other instance says the same.
      const other = seen.length % 2 ? b : a;
      assert.equal((await postPlant(other, a.token, body())).status, 429);
    });

    it("reads a counter's expiry from Redis within the window: no longer Retry-After", async () => {
      const [a] = servers as [TestApp];
      const { token } = await createToken(a.services.store, { name: 'planted' });
      assert.equal((await postPlant(a, token, body())).status, 200);
      // Its counter, made over the limit and expiring in 3,000 years: not what this limiter sets.
      // (Before the refusals below, which block this address for the window.)
      const { Redis } = await import('ioredis');
      const redis = new Redis(`redis://127.0.0.1:${port}`);
      const key = `plant-store:rate-limit:token:${hashToken(token)}`;
      assert.equal(await redis.exists(key), 1, 'the token is counted in Redis');
      await redis.set(key, '100', 'PX', 99_999_999_999_999);
      redis.disconnect();
      assert429(await postPlant(a, token, body()), 6, 60);
    });

    it('counts refused credentials from one address across instances', async () => {
      const [a, b] = servers as [TestApp, TestApp];
      const seen: RawResponse[] = [];
      for (let i = 0; i < 20 && seen.at(-1)?.status !== 429; i++) {
        seen.push(await getPlants(i % 2 ? b : a, `Bearer ${newToken()}`));
      }
      assert.equal(seen.at(-1)!.status, 429);
      assert.equal(seen.length, 5, 'four refusals over two instances, then 429');
    });

    it('names its keys plant-store:rate-limit:, then what each counts (the manual, Rate limits)', async () => {
      const [a] = servers as [TestApp];
      const { Redis } = await import('ioredis');
      const redis = new Redis(`redis://127.0.0.1:${port}`);
      try {
        const keys = await redis.keys('*');
        for (const key of keys) assert.match(key, /^plant-store:rate-limit:(token:[0-9a-f]{64}|address:[0-9a-f.:]+)$/);
        assert.ok(keys.includes(`plant-store:rate-limit:token:${hashToken(a.token)}`), keys.join('\n'));
        assert.ok(keys.includes('plant-store:rate-limit:address:127.0.0.1'), keys.join('\n'));
      } finally {
        redis.disconnect();
      }
    });
  });
}
