// Webhooks an operator can steer, on both stores, with real subscribers on 127.0.0.1: a delivery
// given up is sent again by `webhook redeliver` with its webhook-id and a fresh signature;
// `webhook test` sends a signed test event now and prints the answer; `webhook list` says why an
// endpoint last failed; the delivery metrics are labelled by endpoint.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Webhook } from 'standardwebhooks';
import { openStore } from '../../src/store/open-store.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { cli } from '../support/cli.js';
import { postPlant, send } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { FAST_WEBHOOKS, Receiver, type Received } from '../support/receiver.js';
import { createMigratedTestStore, stores, suiteOptions } from '../support/stores.js';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function receiver(respond: Receiver['respond']): Promise<Receiver> {
  const r = await new Receiver().start();
  r.respond = respond;
  cleanups.push(() => r.close());
  return r;
}

/** `webhook add`, the command: the endpoint's id and its secret. */
async function add(env: Record<string, string>, url: string): Promise<{ id: string; secret: string }> {
  const r = await cli(['webhook', 'add', url], env);
  assert.equal(r.status, 0, r.stderr);
  const [id, secret] = r.stdout.trim().split('\n');
  return { id: id!, secret: secret! };
}

interface Listed {
  endpoint: { id: string };
  delivered: number;
  failed: number;
  lastFailure: { reason: string; at: string } | null;
}
async function list(env: Record<string, string>): Promise<Map<string, Listed>> {
  const r = await cli(['webhook', 'list', '--json'], env);
  assert.equal(r.status, 0, r.stderr);
  return new Map((JSON.parse(r.stdout) as Listed[]).map((e) => [e.endpoint.id, e]));
}

/** Each sample of a metric: its labels and value. */
async function samples(s: TestApp, name: string): Promise<{ labels?: Record<string, string>; value: string }[]> {
  const r = await send(s, { path: '/metrics', headers: { authorization: `Bearer ${s.token}` } });
  return (parsePrometheusTextFormat(r.text).find((f) => f.name === name)?.metrics ?? []) as {
    labels?: Record<string, string>;
    value: string;
  }[];
}
const sample = async (s: TestApp, name: string, labels: Record<string, string>) =>
  (await samples(s, name)).find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value;

const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers);
const until = (check: () => boolean | Promise<boolean>, ms = 15_000) => pollUntil(async () => check(), ms);

for (const kind of stores) {
  describe(`steering webhooks on ${kind}`, suiteOptions(kind), () => {
    it('redelivers a given-up delivery with its webhook-id, signed afresh; list and metrics say which endpoint failed', async () => {
      const failing = await receiver(() => ({ status: 500 }));
      const hanging = await receiver(() => 'hang');
      const store = await createMigratedTestStore(kind);
      cleanups.push(() => store.drop());
      const env = { DATABASE_URL: store.databaseUrl, ...FAST_WEBHOOKS };
      const a = await add(env, failing.url);
      const b = await add(env, hanging.url);
      // A window of 3 s gives the delivery to `a` up after a few 500s (one second let a loaded
      // machine make one attempt only); `b`'s one attempt hangs, pending.
      const windowed = { WEBHOOK_RETRY_WINDOW: '3s', WEBHOOK_TIMEOUT_MS: '60000' };
      const s = await buildTestApp({ databaseUrl: store.databaseUrl, env: { ...FAST_WEBHOOKS, ...windowed } });
      cleanups.push(() => s.close());
      assert.equal((await postPlant(s, s.token, '{"id":1,"name":"Fern"}')).status, 200);
      assert.ok(await until(async () => (await list(env)).get(a.id)!.failed === 1), 'given up');
      assert.ok(failing.requests.length >= 2, 'retried before it was given up');
      const webhookId = failing.requests[0]!.headers['webhook-id']!;
      assert.match(webhookId, /^msg_\d+$/);
      assert.deepEqual(new Set(failing.requests.map((r) => r.headers['webhook-id'])), new Set([webhookId]));

      const listed = await list(env);
      assert.equal(listed.get(a.id)!.lastFailure?.reason, 'HTTP 500');
      assert.equal(listed.get(b.id)!.lastFailure, null);
      const table = (await cli(['webhook', 'list'], env)).stdout;
      assert.match(table, new RegExp(`^${a.id} .* HTTP 500 \\(\\d{4}-`, 'm'));
      assert.match(
        table,
        new RegExp(`^${a.id}/${webhookId} +plant\\.created +failed`, 'm'),
        'the delivery id to redeliver',
      );
      const attempts = 'plant_store_webhook_attempts_total';
      assert.equal(await sample(s, attempts, { endpoint: a.id, outcome: 'failed' }), '1');
      // Every 500 but the last was retried (the last too, when the window ended before its retry).
      const retried = Number(await sample(s, attempts, { endpoint: a.id, outcome: 'retry' }));
      assert.ok([failing.requests.length - 1, failing.requests.length].includes(retried), `${retried} retried`);
      assert.equal(await sample(s, attempts, { endpoint: b.id, outcome: 'failed' }), undefined);
      assert.equal(await sample(s, 'plant_store_webhook_pending_deliveries', { endpoint: b.id }), '1');
      assert.equal(await sample(s, 'plant_store_webhook_pending_deliveries', { endpoint: a.id }), '0');

      const pending = await cli(['webhook', 'redeliver', `${b.id}/${webhookId}`], env);
      assert.deepEqual(
        [pending.status, pending.stderr],
        [1, `plant-store: delivery ${b.id}/${webhookId} is pending (not given up yet)\n`],
      );
      const unknown = await cli(['webhook', 'redeliver', 'msg_1'], env);
      assert.equal(unknown.status, 1);
      assert.match(unknown.stderr, /^plant-store: no event "msg_1" \(an unknown id/);
      assert.equal((await cli(['webhook', 'redeliver', 'ep_x'], env)).status, 1);

      failing.respond = () => ({ status: 200 });
      const queuedAt = Math.floor(Date.now() / 1000);
      const redelivered = await cli(['webhook', 'redeliver', webhookId], env);
      assert.equal(redelivered.status, 0, redelivered.stderr);
      assert.equal(redelivered.stdout, `queued ${a.id}/${webhookId}\n`);
      assert.equal(redelivered.stderr, `plant-store: left ${b.id}/${webhookId}: pending\n`);
      assert.ok(await until(() => failing.accepted().length === 1), 'sent again');
      const again = failing.accepted()[0]!;
      assert.equal(again.headers['webhook-id'], webhookId);
      assert.equal(again.body, failing.requests[0]!.body);
      assert.ok(Number(again.headers['webhook-timestamp']) >= queuedAt, 'signed when sent again');
      assert.deepEqual(verify(a.secret, again), { id: 1, name: 'Fern' });

      assert.ok(await until(async () => (await list(env)).get(a.id)!.delivered === 1));
      const done = await cli(['webhook', 'redeliver', `${a.id}/${webhookId}`], env);
      assert.deepEqual([done.status, done.stderr], [1, `plant-store: delivery ${a.id}/${webhookId} was delivered\n`]);
      assert.equal(await sample(s, attempts, { endpoint: a.id, outcome: 'delivered' }), '1');
      // (The parser flattens a labelled histogram: its text is read.)
      const text = (await send(s, { path: '/metrics', headers: { authorization: `Bearer ${s.token}` } })).text;
      assert.match(text, new RegExp(`^plant_store_webhook_delivery_lag_seconds_count\\{endpoint="${a.id}"\\} 1$`, 'm'));
      assert.doesNotMatch(text, new RegExp(`lag_seconds_count\\{endpoint="${b.id}"`));
      // A removed endpoint's pending deliveries go, and so does its gauge.
      assert.equal((await cli(['webhook', 'remove', b.id], env)).status, 0);
      assert.equal(await sample(s, 'plant_store_webhook_pending_deliveries', { endpoint: b.id }), undefined);
    });

    it('webhook test sends a signed webhook.test now, prints the answer, and writes nothing', async () => {
      const hook = await receiver(() => ({ status: 202, body: 'thanks\n' }));
      const store = await createMigratedTestStore(kind);
      cleanups.push(() => store.drop());
      const env = { DATABASE_URL: store.databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' };
      const a = await add(env, hook.url);
      const position = async () => {
        const { store: st } = await openStore({ databaseUrl: store.databaseUrl, databasePoolSize: 1 });
        return st.changes.bounds().finally(() => st.close());
      };
      const before = await position();

      const ok = await cli(['webhook', 'test', a.id], env);
      assert.equal(ok.status, 0, ok.stderr);
      const [sent, answer, body] = ok.stdout.trim().split('\n');
      assert.match(sent!, new RegExp(`^sent webhook\\.test msg_test_[A-Za-z0-9_-]{16} to ${hook.url}$`));
      assert.match(answer!, /^HTTP 202 in \d+ ms$/);
      assert.equal(body, 'body: "thanks\\n"');
      assert.equal(hook.requests.length, 1);
      const [received] = hook.requests;
      assert.equal(received!.headers['webhook-event-type'], 'webhook.test');
      assert.equal(received!.headers['webhook-id'], sent!.split(' ')[2]);
      const event = verify(a.secret, received!) as { type: string; endpoint: string; time: string };
      assert.deepEqual([event.type, event.endpoint], ['webhook.test', a.id]);
      assert.ok(Math.abs(Date.parse(event.time) - Date.now()) < 60_000);

      hook.respond = () => ({ status: 500, body: 'nope' });
      const refused = await cli(['webhook', 'test', a.id], env);
      assert.equal(refused.status, 1);
      assert.match(refused.stdout, /^HTTP 500 in \d+ ms\nbody: "nope"$/m);
      assert.equal(refused.stderr, 'plant-store: the endpoint answered HTTP 500, not 2xx\n');
      // A body is shown, not obeyed: controls and direction overrides as escapes; its first 256
      // bytes in whole characters (a 2-byte character cut by the 256th is left out), then "…".
      hook.respond = () => ({ status: 200, body: `\u202e\u009b${'é'.repeat(200)}` });
      const shown = await cli(['webhook', 'test', a.id], env);
      assert.equal(shown.stdout.split('\n')[2], `body: "\\u202e\\u009b${'é'.repeat(125)}" …`);
      // The same address guard as deliveries.
      const guarded = await cli(['webhook', 'test', a.id], { ...env, WEBHOOK_ALLOW_PRIVATE: 'false' });
      assert.equal(guarded.status, 1);
      // Refused, not a network failure: it says so, and which setting allows it.
      assert.match(guarded.stdout, /^did not send webhook\.test msg_test_[A-Za-z0-9_-]{16} to /);
      assert.match(
        guarded.stdout,
        /^refused: 127\.0\.0\.1 is not a public address \(.*WEBHOOK_ALLOW_PRIVATE is off\)$/m,
      );
      assert.doesNotMatch(guarded.stdout, /no answer after/);
      assert.equal(
        guarded.stderr,
        'plant-store: refused to send to a private address; to allow it (a receiver on this machine or your network), set WEBHOOK_ALLOW_PRIVATE=true for this command and for the server\n',
      );
      assert.equal(hook.requests.length, 3, 'nothing reached the subscriber');
      const unknown = await cli(['webhook', 'test', 'ep_AAAAAAAAAAAAAAAA'], env);
      assert.deepEqual(
        [unknown.status, unknown.stderr],
        [1, 'plant-store: no webhook endpoint with id "ep_AAAAAAAAAAAAAAAA"\n'],
      );

      // A test is no change and no delivery: not in the change log, not the endpoint's last failure.
      assert.deepEqual(await position(), before);
      const listed = (await list(env)).get(a.id)!;
      assert.deepEqual([listed.delivered, listed.failed, listed.lastFailure], [0, 0, null]);
    });
  });
}
