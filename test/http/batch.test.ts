// POST /plants/batch as a client uses it, on both stores, every response checked against the
// document: operations in order, each seeing the ones before it, one result each; all or nothing
// when one fails (the status it would have had alone, its index first, and nothing applied: no
// plant, no change in the log, no webhook event); its own body limit; the body rules of one plant.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { readJson } from '../../src/json/read-json.js';
import { addWebhook } from '../../src/use-cases/webhooks.js';
import { useTestApp, type TestApp } from '../helper.js';
import { pollUntil } from '../support/poll.js';
import { open } from '../support/raw-connection.js';
import { FAST_WEBHOOKS, Receiver } from '../support/receiver.js';
import { stores, suiteOptions } from '../support/stores.js';
import { requests } from '../support/changes.js';

interface Result {
  status: number;
  plant?: { name: string; tag?: string };
  etag?: string;
}

/** An id past 2^53, written exactly where the operations say BIG (JSON.stringify would round it). */
const BIG = '9007199254740993';

const batch = (app: TestApp, operations: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    path: '/plants/batch',
    headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json', ...headers },
    body: typeof operations === 'string' ? operations : JSON.stringify({ operations }).replaceAll('"BIG"', BIG),
  });

const results = (text: string) => (readJson(text) as { results: Result[] }).results;
const message = (text: string) => (JSON.parse(text) as { message: string }).message;

for (const kind of stores) {
  describe(`POST /plants/batch [${kind}]`, suiteOptions(kind), () => {
    const hook = new Receiver();
    const t = useTestApp(() => ({ store: kind, env: FAST_WEBHOOKS }));
    after(() => hook.close());

    /** Every webhook event sent so far, as [type, body], once the outbox has none left to send. */
    const events = async (): Promise<string[][]> => {
      await pollUntil(async () => (await t.app.services.store.webhooks.countPendingDeliveries()) === 0, 10_000);
      return hook.requests.map((r) => [r.headers['webhook-event-type']!, r.body]);
    };

    it('applies operations in order, each seeing the ones before it; one change and one event each', async () => {
      await hook.start();
      const config = loadConfig({ DATABASE_URL: t.app.databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' });
      await addWebhook(t.app.services.store, config, hook.url, ['plant.created', 'plant.updated', 'plant.deleted']);
      const { write, position, changes } = requests(t.app);
      assert.equal((await write('POST', '/plants', { id: 5, name: 'Aloe' })).status, 200);
      const aloe = String((await t.app.inject({ path: '/plants/5', headers: requests(t.app).auth })).headers.etag);
      const start = position(await t.app.inject({ path: '/plants', headers: requests(t.app).auth }));
      const sentBefore = (await events()).length;

      const res = await batch(t.app, [
        { op: 'create', plant: { id: 'BIG', name: 'Monstera' } },
        { op: 'patch', id: 'BIG', patch: { tag: 'tropical' } },
        { op: 'create', plant: { id: 5, name: 'Aloe' } },
        { op: 'replace', id: 5, plant: { name: 'Aloe vera', tag: 'succulent' }, ifMatch: aloe },
        { op: 'create', plant: { id: 6, name: 'Fern' } },
        { op: 'delete', id: 6, ifMatch: '*' },
        { op: 'create', plant: { id: 6, name: 'Fern again', extra: 'ignored' } },
      ]);
      assert.equal(res.status, 200, res.text);
      const got = results(res.text);
      assert.deepEqual(
        got.map((r) => [r.status, r.plant && { ...r.plant }]),
        [
          [200, { name: 'Monstera' }],
          [200, { name: 'Monstera', tag: 'tropical' }],
          [200, { name: 'Aloe' }],
          [200, { name: 'Aloe vera', tag: 'succulent' }],
          [200, { name: 'Fern' }],
          [204, undefined],
          [200, { name: 'Fern again' }],
        ],
      );
      // Each ETag is the one the plant's own GET sends while it is unchanged.
      const big = await t.app.inject({ path: `/plants/${BIG}`, headers: requests(t.app).auth });
      assert.equal(got[1]!.etag, big.headers.etag);
      assert.equal(big.text, '{"id":9007199254740993,"name":"Monstera","tag":"tropical"}');

      // The identical create of plant 5 changed nothing: six changes, in the operations' order.
      const { list } = await changes(`?after=${start}`);
      assert.deepEqual(
        list.map((c) => [c.type, String(c.id)]),
        [
          ['created', '9007199254740993'],
          ['updated', '9007199254740993'],
          ['updated', '5'],
          ['created', '6'],
          ['deleted', '6'],
          ['created', '6'],
        ],
      );
      const positions = list.map((c) => BigInt(c.position));
      assert.deepEqual(
        positions,
        [...positions].sort((a, b) => (a < b ? -1 : 1)),
      );
      assert.equal(position(res), positions.at(-1), 'Change-Position is the last change');
      assert.ok(await pollUntil(async () => hook.requests.length >= sentBefore + 6, 10_000));
      // One event per change; deliveries keep the order of each plant's changes.
      const sent = (await events()).slice(sentBefore);
      assert.equal(sent.length, 6);
      assert.deepEqual(
        sent.filter(([, body]) => body!.startsWith('{"id":6,')),
        [
          ['plant.created', '{"id":6,"name":"Fern"}'],
          ['plant.deleted', '{"id":6,"name":"Fern"}'],
          ['plant.created', '{"id":6,"name":"Fern again"}'],
        ],
      );
      assert.deepEqual(
        sent
          .filter(([, body]) => !body!.startsWith('{"id":6,'))
          .map(([type, body]) => `${type} ${body}`)
          .sort(),
        [
          'plant.created {"id":9007199254740993,"name":"Monstera"}',
          'plant.updated {"id":5,"name":"Aloe vera","tag":"succulent"}',
          'plant.updated {"id":9007199254740993,"name":"Monstera","tag":"tropical"}',
        ],
      );
    });

    it('applies nothing when its last operation fails: the status it would have had alone, its index first', async () => {
      const { write, position, changes } = requests(t.app);
      assert.equal((await write('POST', '/plants', { id: 20, name: 'Ivy', tag: 'climber' })).status, 200);
      assert.equal((await write('POST', '/plants', { id: 21, name: 'Moss' })).status, 200);
      const stored = async () =>
        (await t.app.inject({ path: '/plants?after=19&limit=10', headers: requests(t.app).auth })).text;
      const before = await stored();
      const earlier = [
        { op: 'create', plant: { id: 22, name: 'Fern' } },
        { op: 'patch', id: 20, patch: { tag: null } },
        { op: 'replace', id: 21, plant: { name: 'Moss', tag: 'green' } },
        { op: 'delete', id: 22 },
        { op: 'create', plant: { id: 23, name: 'Aloe' } },
      ];
      const failing: [unknown, number, string][] = [
        [{ op: 'delete', id: 404 }, 404, 'operations[5]: plant 404 does not exist'],
        [{ op: 'create', plant: { id: 21, name: 'Not moss' } }, 409, 'operations[5]: plant 21 already exists'],
        [{ op: 'patch', id: 20, patch: { name: 'x' }, ifMatch: '"nope"' }, 412, 'operations[5]: plant 20 has changed'],
        // A weak tag never matches strongly: 412, as a single PATCH with If-Match: W/"…" is.
        [{ op: 'replace', id: 21, plant: { name: 'x' }, ifMatch: 'W/"x"' }, 412, 'operations[5]: plant 21 has changed'],
        [
          { op: 'replace', id: 20, plant: { id: 21, name: 'x' } },
          400,
          'operations[5]: plant.id (21) must equal id (20)',
        ],
        [{ op: 'patch', id: 23, patch: { id: 24 } }, 400, 'operations[5]: patch.id (24) must equal id (23)'],
      ];
      const start = position(await t.app.inject({ path: '/plants', headers: requests(t.app).auth }));
      const sent = (await events()).length;
      for (const [last, status, text] of failing) {
        const res = await batch(t.app, [...earlier, last]);
        assert.equal(res.status, status, res.text);
        assert.ok(message(res.text).startsWith(text), message(res.text));
      }
      assert.equal(await stored(), before, 'every earlier target is as it was');
      assert.deepEqual((await changes(`?after=${start}`)).list, [], 'no change in the log');
      assert.equal(position(await t.app.inject({ path: '/plants', headers: requests(t.app).auth })), start);
      // A write after them is the next event: none of theirs came before it.
      assert.equal((await write('DELETE', '/plants/21')).status, 204);
      assert.ok(await pollUntil(async () => hook.requests.length > sent, 10_000));
      assert.deepEqual((await events()).slice(sent), [['plant.deleted', '{"id":21,"name":"Moss"}']]);
    });

    it('names the first operation a refusal of the store comes from, not a later one', async () => {
      const res = await batch(t.app, [
        { op: 'create', plant: { id: 30, name: 'a' } },
        { op: 'patch', id: 30, patch: { name: 'b' }, ifMatch: '"stale"' },
        { op: 'delete', id: 31 },
      ]);
      assert.equal(res.status, 412, res.text);
      assert.match(message(res.text), /^operations\[1\]: plant 30 has changed/);
    });

    it('compares ifMatch strongly, as If-Match: the weak form of the plant’s own ETag is 412 in both', async () => {
      const { write, auth } = requests(t.app);
      assert.equal((await write('POST', '/plants', { id: 32, name: 'Ivy' })).status, 200);
      const etag = String((await t.app.inject({ path: '/plants/32', headers: auth })).headers.etag);
      const alone = await t.app.inject({
        method: 'PATCH',
        path: '/plants/32',
        headers: { ...auth, 'content-type': 'application/merge-patch+json', 'if-match': `W/${etag}` },
        body: '{"tag":"x"}',
      });
      assert.equal(alone.status, 412, alone.text);
      for (const op of [
        { op: 'patch', id: 32, patch: { tag: 'x' } },
        { op: 'replace', id: 32, plant: { name: 'x' } },
        { op: 'delete', id: 32 },
      ]) {
        const weak = await batch(t.app, [{ ...op, ifMatch: `W/${etag}` }]);
        assert.equal(weak.status, 412, weak.text);
        assert.match(message(weak.text), /^operations\[0\]: plant 32 has changed/);
      }
      assert.equal((await batch(t.app, [{ op: 'delete', id: 32, ifMatch: etag }])).status, 200, 'the strong one holds');
    });

    it('refuses a body that is not a valid batch, naming the first bad operation', async () => {
      const ok = { op: 'create', plant: { id: 40, name: 'a' } };
      const cases: [unknown, string][] = [
        [[ok, { op: 'frob', id: 1 }], 'operations[1]: op must be one of create, replace, patch, delete'],
        [[ok, { id: 1 }], 'operations[1]: op is required'],
        [
          [ok, ok, { op: 'create', plant: { id: 1, name: '' } }],
          'operations[2]: plant.name must have at least 1 character',
        ],
        [[{ op: 'delete', id: 1.5 }], 'operations[0]: id must be an integer'],
        [[{ op: 'delete', id: '1' }], 'operations[0]: id must be an integer'],
        [[{ op: 'patch', id: 1, patch: { nmae: 'x' } }], 'operations[0]: patch has the member "nmae"'],
        [[{ op: 'delete', id: 1, ifmatch: '*' }], 'operations[0]: operation has the member "ifmatch"'],
        [[{ op: 'delete', id: 1, ifMatch: 'x' }], 'operations[0]: ifMatch must be * or an entity tag in double quotes'],
        [[ok, 7], 'operations[1]: operation must be a JSON object'],
        [[], 'operations must have at least 1 item'],
        [Array(1001).fill({ op: 'delete', id: 1 }), 'operations must have at most 1000 items'],
      ];
      for (const [operations, text] of cases) {
        const res = await batch(t.app, operations);
        assert.equal(res.status, 400, res.text);
        assert.ok(message(res.text).startsWith(text), `${message(res.text)} / ${text}`);
      }
      for (const [body, text] of [
        ['{"operations":[{"op":"delete","id":1,"id":2}]}', 'duplicate'],
        ['{"operations":[{"op":"delete","id":9223372036854775808}]}', 'operations[0]: id must be an integer'],
        ['{"operations":[]} x', ''],
        ['{"operation":[]}', 'operations is required'],
        ['{"operations":{"op":"delete","id":1}}', '^operations must be an array$'],
        ['{"operations":[{"op":"delete","id":1}],"x":1}', 'body has the member "x"'],
      ]) {
        const res = await batch(t.app, body!);
        assert.equal(res.status, 400, res.text);
        assert.match(message(res.text), new RegExp(text!.replace(/[[\]]/g, '\\$&')));
      }
      assert.equal((await t.app.inject({ path: '/plants/40', headers: requests(t.app).auth })).status, 404);
    });

    it('has a body limit of its own: 1 MiB, where one plant has 16 KiB', async () => {
      const many = Array.from({ length: 1000 }, (_, i) => ({
        op: 'create',
        plant: { id: 1000 + i, name: `plant ${i} ${'x'.repeat(40)}` },
      }));
      const body = JSON.stringify({ operations: many });
      assert.ok(body.length > 16 * 1024 && body.length < 1024 * 1024);
      const res = await batch(t.app, body);
      assert.equal(res.status, 200, res.text);
      assert.equal(results(res.text).length, 1000);
      const big = JSON.stringify({
        operations: [{ op: 'create', plant: { id: 1, name: 'a', pad: 'x'.repeat(1024 * 1024) } }],
      });
      const refused = await batch(t.app, big);
      assert.equal(refused.status, 413);
      assert.equal(message(refused.text), 'request body is larger than the limit of 1048576 bytes');
      const one = await t.app.inject({
        method: 'POST',
        path: '/plants',
        headers: { authorization: `Bearer ${t.app.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 1, name: 'a', pad: 'x'.repeat(20_000) }),
      });
      assert.equal(one.status, 413, 'a single plant keeps its own limit');
    });

    it('stops reading a body of tiny values at one value per 16 bytes of its limit', async () => {
      const tiny = (n: number) =>
        `{"operations":[{"op":"create","plant":{"id":1,"name":"a","pad":[${'{},'.repeat(n)}0]}}]}`;
      const refused = await batch(t.app, tiny(340_000));
      assert.equal(refused.status, 400, refused.text);
      assert.match(message(refused.text), /^the body holds more than 65536 JSON values/);
      const plant = await t.app.inject({
        method: 'POST',
        path: '/plants',
        headers: { authorization: `Bearer ${t.app.token}`, 'content-type': 'application/json' },
        body: `{"id":1,"name":"a","pad":[${'{},'.repeat(2000)}0]}`,
      });
      assert.equal(plant.status, 400, 'a single plant: 1,024 values in 16 KiB');
      assert.match(message(plant.text), /more than 1024 JSON values/);
      assert.equal((await batch(t.app, tiny(1000))).status, 200, 'ignored members of fewer values are read');
    });

    it('reads at most 8 batches at once: the 9th is 503 before its body, and places come back', async () => {
      const port = Number(new URL(await t.app.listen()).port);
      const head = (length: number) =>
        `POST /plants/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.app.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
      // Eight that send their headers and a first byte of their bodies, then nothing.
      const held = Array.from({ length: 8 }, () => open(port));
      const ninth = open(port);
      const anonymous = open(port);
      try {
        for (const c of held) c.socket.write(`${head(100)}{`);
        await new Promise((r) => setTimeout(r, 300));
        ninth.socket.write(head(100));
        await ninth.waitFor('\r\n\r\n');
        assert.match(ninth.data(), /^HTTP\/1\.1 503 /);
        assert.match(ninth.data(), /retry-after: 1/i);
        await ninth.waitFor('more than 8 of these requests at once');
        // An anonymous request takes no place and is refused as ever.
        anonymous.socket.write('POST /plants/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\n');
        await anonymous.waitFor('HTTP/1.1 401');
      } finally {
        // Held connections would keep the server from closing if an assertion failed.
        for (const c of [...held, ninth, anonymous]) c.socket.destroy();
      }
      // The closed connections gave their places back.
      assert.ok(
        await pollUntil(
          async () => (await batch(t.app, [{ op: 'create', plant: { id: 60, name: 'a' } }])).status === 200,
          5000,
        ),
      );
    });

    it('answers the path as the document has it: 405 for other methods, 401, 403, 415 first', async () => {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const res = await t.app.inject({ method, path: '/plants/batch', headers: requests(t.app).auth });
        assert.equal(res.status, 405, `${method}: ${res.text}`);
        assert.equal(res.headers.allow, 'POST');
      }
      const body = JSON.stringify({ operations: [{ op: 'delete', id: 1 }] });
      const anonymous = await t.app.inject({
        method: 'POST',
        path: '/plants/batch',
        headers: { 'content-type': 'application/json' },
        body,
      });
      assert.equal(anonymous.status, 401);
      assert.equal((await batch(t.app, body, { 'content-type': 'text/plain' })).status, 415);
    });
  });
}
