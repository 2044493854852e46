// Webhooks: a real subscriber on 127.0.0.1 receives signed deliveries
// that the standardwebhooks library verifies; retries, order per plant, a hanging subscriber,
// SIGKILL with undelivered events, 410, the address guard, and two instances on PostgreSQL.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../src/config/config.js';
import { NotFoundError } from '../../src/domain/errors.js';
import { EVENT_TYPES, type EventType } from '../../src/domain/webhook.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { importPlants } from '../../src/use-cases/export-import.js';
import { addWebhook as subscribe, removeWebhook } from '../../src/use-cases/webhooks.js';
import { buildTestApp, type TestApp, type TestAppOptions } from '../helper.js';
import { cli } from '../support/cli.js';
import { postPlant, send } from '../support/http.js';
import { startServer } from '../support/server.js';
import { pollUntil } from '../support/poll.js';
import { FAST_WEBHOOKS, Receiver, type Received } from '../support/receiver.js';
import { createMigratedTestStore, createTestStore, type StoreKind, stores, suiteOptions } from '../support/stores.js';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function receiver(): Promise<Receiver> {
  const r = await new Receiver().start();
  cleanups.push(() => r.close());
  return r;
}

async function server(options: TestAppOptions): Promise<TestApp> {
  const s = await buildTestApp({ logs: true, ...options, env: { ...FAST_WEBHOOKS, ...options.env } });
  cleanups.push(() => s.close());
  return s;
}

/** Works on the store the way a command does: its own connection, opened and closed. */
async function withStore<T>(databaseUrl: string, work: (store: Store) => Promise<T>): Promise<T> {
  const { store } = await openStore({ databaseUrl, databasePoolSize: 1 });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** `webhook add`, as the command does it, with private addresses allowed. */
async function addWebhook(
  databaseUrl: string,
  url: string,
  events: EventType[] = [...EVENT_TYPES],
  env: Record<string, string> = {},
): Promise<{ id: string; secret: string }> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true', ...env });
  const { endpoint, secret } = await withStore(databaseUrl, (store) => subscribe(store, config, url, events));
  assert.match(endpoint.id, /^ep_/);
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  return { id: endpoint.id, secret };
}

const auth = (s: TestApp) => ({ authorization: `Bearer ${s.token}`, 'content-type': 'application/json' });
const rename = (s: TestApp, id: string, body: string) =>
  send(s, { method: 'PUT', path: `/plants/${id}`, headers: auth(s), body });
const remove = (s: TestApp, id: string) =>
  send(s, { method: 'DELETE', path: `/plants/${id}`, headers: { authorization: `Bearer ${s.token}` } });

function verify(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, r.headers);
}

const until = (check: () => boolean, ms = 15_000) => pollUntil(async () => check(), ms);

for (const kind of stores) {
  describe(`webhooks on ${kind}`, suiteOptions(kind), () => {
    it('delivers create, update and delete, signed, in order, with exact ids; an idempotent retry emits nothing', async () => {
      const hook = await receiver();
      const store = createTestStore(kind);
      cleanups.push(() => store.drop());
      const s = await server({ databaseUrl: store.databaseUrl });
      const { secret } = await addWebhook(store.databaseUrl, hook.url);

      assert.equal((await postPlant(s, s.token, '{"id":9007199254740993,"name":"Monstera","tag":"big"}')).status, 200);
      // The same POST again is an idempotent retry: no second event.
      assert.equal((await postPlant(s, s.token, '{"id":9007199254740993,"name":"Monstera","tag":"big"}')).status, 200);
      assert.equal((await rename(s, '9007199254740993', '{"name":"Swiss cheese plant"}')).status, 200);
      assert.equal((await remove(s, '9007199254740993')).status, 204);
      // A change that did not happen emits nothing either.
      assert.equal((await remove(s, '9007199254740993')).status, 404);

      assert.ok(await until(() => hook.requests.length >= 3), `3 deliveries, got ${hook.requests.length}`);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(hook.requests.length, 3);
      assert.deepEqual(
        hook.requests.map((r) => [r.headers['webhook-event-type'], r.body]),
        [
          ['plant.created', '{"id":9007199254740993,"name":"Monstera","tag":"big"}'],
          ['plant.updated', '{"id":9007199254740993,"name":"Swiss cheese plant"}'],
          ['plant.deleted', '{"id":9007199254740993,"name":"Swiss cheese plant"}'],
        ],
      );
      for (const r of hook.requests) {
        assert.equal(r.headers['content-type'], 'application/json');
        assert.match(r.headers['webhook-id']!, /^msg_/);
        assert.ok(verify(secret, r));
        assert.throws(() => verify(secret, { ...r, body: `${r.body} ` }));
      }
      assert.equal(new Set(hook.requests.map((r) => r.headers['webhook-id'])).size, 3);
      assert.throws(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, hook.requests[0]!));

      const list = await cli(['webhook', 'list'], { DATABASE_URL: store.databaseUrl });
      assert.equal(list.status, 0, list.stderr);
      assert.match(list.stdout, /enabled/);
      assert.match(list.stdout, /HTTP 200/);
      assert.doesNotMatch(list.stdout + list.stderr, /whsec_/);
      assert.ok(!s.logs.join('\n').includes(secret.slice(6)), 'the secret is never logged');
    });

    it('retries after 500s and a dropped connection with the same webhook-id, keeping the order per plant', async () => {
      const hook = await receiver();
      // Each event fails three times (500, a dropped connection, 503 with Retry-After), then succeeds.
      const seen = new Map<string, number>();
      hook.respond = (r) => {
        const n = (seen.get(r.headers['webhook-id']!) ?? 0) + 1;
        seen.set(r.headers['webhook-id']!, n);
        if (n === 1) return { status: 500 };
        if (n === 2) return 'drop';
        if (n === 3) return { status: 503, headers: { 'retry-after': '0' } };
        return { status: 200 };
      };
      const store = createTestStore(kind);
      cleanups.push(() => store.drop());
      const s = await server({ databaseUrl: store.databaseUrl });
      const { secret } = await addWebhook(store.databaseUrl, hook.url);

      assert.equal((await postPlant(s, s.token, '{"id":7,"name":"Fern"}')).status, 200);
      assert.equal((await rename(s, '7', '{"name":"Boston fern"}')).status, 200);
      assert.equal((await remove(s, '7')).status, 204);
      assert.equal((await postPlant(s, s.token, '{"id":8,"name":"Cactus"}')).status, 200);

      assert.ok(
        await until(() => hook.accepted().length >= 4),
        `4 accepted, got ${hook.accepted().length}: ${JSON.stringify(hook.requests.map((r) => [r.headers['webhook-id'], r.body]))}\n${s.logs.join('\n')}`,
      );
      assert.equal(hook.requests.length, 16, 'four attempts of each event, the same webhook-id each time');
      assert.deepEqual([...seen.values()], [4, 4, 4, 4]);
      // Order per plant: no attempt of a plant's next event before its previous one was accepted.
      const ofPlant7 = hook.requests
        .filter((r) => r.body.startsWith('{"id":7,'))
        .map((r) => r.headers['webhook-event-type']);
      assert.deepEqual(ofPlant7, [
        ...Array(4).fill('plant.created'),
        ...Array(4).fill('plant.updated'),
        ...Array(4).fill('plant.deleted'),
      ]);
      const plant7 = hook.accepted().filter((r) => r.body.startsWith('{"id":7,'));
      assert.deepEqual(
        plant7.map((r) => r.headers['webhook-event-type']),
        ['plant.created', 'plant.updated', 'plant.deleted'],
      );
      for (const r of hook.accepted()) assert.ok(verify(secret, r));
      const ts = hook.requests.map((r) => Number(r.headers['webhook-timestamp']));
      assert.ok(ts.every((t) => Math.abs(t - Date.now() / 1000) < 120));
    });

    it('a hanging subscriber does not slow POST /plants', async () => {
      const hook = await receiver();
      hook.respond = () => 'hang';
      const store = createTestStore(kind);
      cleanups.push(() => store.drop());
      const s = await server({ databaseUrl: store.databaseUrl, env: { WEBHOOK_TIMEOUT_MS: '60000' } });
      await addWebhook(store.databaseUrl, hook.url);
      assert.equal((await postPlant(s, s.token, '{"id":1,"name":"first"}')).status, 200);
      assert.ok(await until(() => hook.requests.length >= 1), 'the subscriber got the first event and hangs');
      const started = Date.now();
      for (let i = 2; i <= 51; i++) {
        assert.equal((await postPlant(s, s.token, `{"id":${i},"name":"p${i}"}`)).status, 200);
      }
      // Generous: 50 sequential writes take well under a second; the hang lasts 60 s.
      assert.ok(Date.now() - started < 20_000, `50 POSTs took ${Date.now() - started} ms`);
      // Nor a shutdown: the attempt in flight is cut short (and retried later), so closing drains at once.
      const closing = Date.now();
      await s.close();
      assert.ok(Date.now() - closing < 10_000, `closing took ${Date.now() - closing} ms`);
    });

    it('events written before a SIGKILL are delivered after the restart', async () => {
      const hook = await receiver();
      hook.respond = () => ({ status: 503 });
      const store = createTestStore(kind);
      cleanups.push(() => store.drop());
      // An attempt in flight at the kill keeps its lease (time-out + 5 s): a short time-out keeps the wait short.
      // The process is the subject here: the built server, killed.
      const s1 = await startServer({
        databaseUrl: store.databaseUrl,
        env: { ...FAST_WEBHOOKS, WEBHOOK_TIMEOUT_MS: '1000' },
      });
      cleanups.push(() => s1.dispose());
      const { secret } = await addWebhook(store.databaseUrl, hook.url);
      for (let i = 1; i <= 5; i++)
        assert.equal((await postPlant(s1.url, s1.token, `{"id":${i},"name":"p${i}"}`)).status, 200);
      assert.ok(await until(() => hook.requests.length >= 1));
      await s1.kill();
      assert.equal(hook.accepted().length, 0);
      hook.respond = () => ({ status: 200 });
      const s2 = await server({ databaseUrl: store.databaseUrl, env: { WEBHOOK_TIMEOUT_MS: '1000' } });
      assert.ok(await until(() => new Set(hook.accepted().map((r) => r.body)).size === 5, 30_000), 'all 5 delivered');
      for (const r of hook.accepted()) assert.ok(verify(secret, r));
      await s2.close();
    });

    it('a subscriber that is down receives the event once it is back; import emits created events', async () => {
      const hook = await receiver();
      const port = hook.port;
      const store = createTestStore(kind);
      cleanups.push(() => store.drop());
      // Secrets sealed at rest: the CLI and the server share WEBHOOK_SECRET_KEY.
      const sealing = { WEBHOOK_SECRET_KEY: Buffer.alloc(32, 3).toString('base64') };
      const s = await server({ databaseUrl: store.databaseUrl, env: sealing });
      const { secret } = await addWebhook(store.databaseUrl, hook.url, ['plant.created'], sealing);
      await hook.close();
      assert.equal((await postPlant(s, s.token, '{"id":1,"name":"while down"}')).status, 200);
      // A replacement is not subscribed to: it sends nothing.
      assert.equal((await rename(s, '1', '{"name":"renamed"}')).status, 200);
      await new Promise((r) => setTimeout(r, 300));
      const back = await new Receiver().start(port);
      cleanups.push(() => back.close());
      assert.ok(await until(() => back.accepted().length >= 1), 'delivered once the subscriber is back');
      assert.equal(back.accepted()[0]!.body, '{"id":1,"name":"while down"}');
      assert.ok(verify(secret, back.accepted()[0]!));

      const imported = await withStore(store.databaseUrl, (st) =>
        importPlants(st, s.services.doc, ['{"id":1,"name":"renamed"}', '{"id":2,"name":"imported"}']),
      );
      assert.deepEqual([imported.created, imported.skipped], [1, 1]);
      assert.ok(await until(() => back.accepted().length >= 2), 'the imported plant is announced');
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(
        back.accepted().map((r) => r.body),
        ['{"id":1,"name":"while down"}', '{"id":2,"name":"imported"}'],
      );
    });

    it('410 Gone disables the endpoint', async () => {
      const hook = await receiver();
      hook.respond = () => ({ status: 410 });
      const store = createTestStore(kind);
      cleanups.push(() => store.drop());
      const s = await server({ databaseUrl: store.databaseUrl });
      const { id } = await addWebhook(store.databaseUrl, hook.url);
      assert.equal((await postPlant(s, s.token, '{"id":1,"name":"a"}')).status, 200);
      assert.ok(await until(() => hook.requests.length >= 1));
      assert.ok(
        await pollUntil(
          async () => (await s.services.store.webhooks.listEndpoints(0))[0]?.endpoint.enabled === false,
          10_000,
          200,
        ),
      );
      assert.equal((await postPlant(s, s.token, '{"id":2,"name":"b"}')).status, 200);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(hook.requests.length, 1, 'a disabled endpoint receives nothing more');
      await removeWebhook(s.services.store, id);
      await assert.rejects(removeWebhook(s.services.store, id), NotFoundError);
    });
  });
}

describe('webhook add refuses unsafe URLs', () => {
  it('refuses loopback unless WEBHOOK_ALLOW_PRIVATE=true, and anything but http(s)', async () => {
    const store = await createMigratedTestStore('sqlite');
    cleanups.push(() => store.drop());
    const env = { DATABASE_URL: store.databaseUrl, WEBHOOK_ALLOW_PRIVATE: undefined };
    const loopback = await cli(['webhook', 'add', 'http://127.0.0.1:9/hook'], env);
    assert.equal(loopback.status, 1);
    assert.match(loopback.stderr, /not a public address.*WEBHOOK_ALLOW_PRIVATE/);
    const privateNet = await cli(['webhook', 'add', 'http://10.1.2.3/hook'], env);
    assert.equal(privateNet.status, 1);
    assert.equal(
      (await cli(['webhook', 'add', 'ftp://example.com/x'], { ...env, WEBHOOK_ALLOW_PRIVATE: 'true' })).status,
      1,
    );
    assert.equal(
      (
        await cli(['webhook', 'add', 'http://127.0.0.1:9/hook', '--events', 'eaten'], {
          ...env,
          WEBHOOK_ALLOW_PRIVATE: 'true',
        })
      ).status,
      1,
    );
    assert.equal((await cli(['webhook', 'list', '--json'], env)).stdout, '[]\n');
  });

  it('the dispatcher refuses a loopback subscriber when private addresses are not allowed', async () => {
    const hook = await receiver();
    const store = createTestStore('sqlite');
    cleanups.push(() => store.drop());
    await addWebhook(store.databaseUrl, hook.url);
    const s = await server({ databaseUrl: store.databaseUrl, env: { WEBHOOK_ALLOW_PRIVATE: 'false' } });
    assert.equal((await postPlant(s, s.token, '{"id":1,"name":"a"}')).status, 200);
    assert.ok(await until(() => s.logs.some((l) => l.includes('EPRIVATEADDRESS'))), s.logs.join('\n'));
    assert.equal(hook.requests.length, 0);
    // The attempt is logged, then recorded.
    const reason = async () => (await s.services.store.webhooks.listEndpoints(0))[0]!.lastFailure?.reason;
    assert.ok(await pollUntil(async () => (await reason()) !== undefined, 5_000));
    assert.equal(await reason(), 'refused: private address', 'webhook list says why');
  });
});

describe('two instances on PostgreSQL', suiteOptions('postgres'), () => {
  it('deliver each event once in the normal case', async () => {
    const hook = await receiver();
    const store = createTestStore('postgres' as StoreKind);
    cleanups.push(() => store.drop());
    const a = await server({ databaseUrl: store.databaseUrl });
    const b = await server({ databaseUrl: store.databaseUrl });
    await addWebhook(store.databaseUrl, hook.url);
    const writes = [];
    for (let i = 1; i <= 40; i++) {
      const s = i % 2 ? a : b;
      writes.push(postPlant(s, s.token, `{"id":${i},"name":"p${i}"}`));
    }
    for (const r of await Promise.all(writes)) assert.equal(r.status, 200);
    assert.ok(await until(() => hook.requests.length >= 40), `40 deliveries, got ${hook.requests.length}`);
    await new Promise((r) => setTimeout(r, 500));
    const ids = hook.requests.map((r) => r.headers['webhook-id']);
    assert.equal(ids.length, 40);
    assert.equal(new Set(ids).size, 40);
  });
});
