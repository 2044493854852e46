import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cli } from '../support/cli.js';
import { postPlant, send } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { assertCreatedOnce, raceCreate } from '../support/race.js';
import { newToken, startPair, type ServerProcess } from '../support/server.js';
import { createTestStore, postgresSql, suiteOptions, type TestStore } from '../support/stores.js';
import { etagOf } from '../../src/domain/plant-write.js';
import { postgresMigrations } from '../../src/store/postgres/migrations.js';

describe('two instances on one PostgreSQL database', suiteOptions('postgres'), () => {
  let db: TestStore;
  let a: ServerProcess;
  let b: ServerProcess;
  const token = newToken();
  const run = (args: string[]) => cli(args, { DATABASE_URL: db.databaseUrl });
  const status = async (url: string, t: string) =>
    (await send(url, { path: '/plants?limit=1', headers: { authorization: `Bearer ${t}` } })).status;

  before(async () => {
    db = createTestStore('postgres');
    // Started together on an empty schema with the same PLANT_STORE_TOKEN, as a deployment would.
    [a, b] = await startPair(db.databaseUrl, token);
  });
  after(async () => {
    await Promise.all([a?.dispose(), b?.dispose()]);
    await db?.drop();
  });

  it('started together: the schema was migrated once and the bootstrap token registered once', async () => {
    const schema = new URL(db.databaseUrl).searchParams.get('schema');
    const versions = await postgresSql(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
    assert.deepEqual(
      versions.rows.map((r: { version: number }) => r.version),
      postgresMigrations.map((_, i) => i + 1),
    );
    const tokens = JSON.parse((await run(['token', 'list', '--json'])).stdout) as unknown[];
    assert.equal(tokens.length, 1, JSON.stringify(tokens));
    assert.match((await run(['migrate'])).stdout, /schema is up to date/);
  });

  it('reads through one instance, at once, what the other acknowledged', async () => {
    for (const [writer, reader] of [
      [a, b],
      [b, a],
    ] as const) {
      const id = writer === a ? 9223372036854775807n : -9223372036854775808n;
      const created = await postPlant(writer.url, token, `{"id":${id},"name":"Monstera 🌿","tag":""}`);
      assert.equal(created.status, 200);
      const read = await send(reader.url, { path: `/plants/${id}`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(read.text, `{"id":${id},"name":"Monstera 🌿","tag":""}`);
    }
    const replaced = await send(b.url, {
      method: 'PUT',
      path: '/plants/9223372036854775807',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"name":"Swiss cheese plant"}',
    });
    assert.equal(replaced.status, 200);
    const read = await send(a.url, { path: '/plants?limit=5', headers: { authorization: `Bearer ${token}` } });
    assert.equal(
      read.text,
      '[{"id":-9223372036854775808,"name":"Monstera 🌿","tag":""},{"id":9223372036854775807,"name":"Swiss cheese plant"}]',
    );
    assert.equal((await postPlant(a.url, token, '{"id":-9223372036854775808,"name":"other"}')).status, 409);
  });

  it('a page of changes through one instance holds what the other just acknowledged, every time', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const stale: string[] = [];
    for (let i = 0; i < 40; i++) {
      const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a];
      // Where the reader's view of the log ends: the position of a list it has just answered.
      const listed = await send(reader.url, { path: '/plants?limit=1', headers: auth });
      const view = BigInt(listed.headers['change-position'] as string);
      const created = await postPlant(writer.url, token, `{"id":${7000 + i},"name":"Fern"}`);
      const position = BigInt(created.headers['change-position'] as string);
      for (const after of [view, position - 1n]) {
        const page = await send(reader.url, { path: `/plants/changes?after=${after}`, headers: auth });
        const got = (JSON.parse(page.text) as { id: number }[]).map((c) => c.id);
        if (!got.includes(7000 + i)) stale.push(`write ${i} at ${position}: after=${after} gave ${page.text}`);
      }
    }
    assert.deepEqual(stale, []);
  });

  it('creates one id once when both instances race to create it', async () => {
    const urls = [a.url, b.url];
    for (let round = 0; round < 10; round++) {
      const id = 1_000_000n + BigInt(round);
      const race = await raceCreate(urls, token, id, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
      await assertCreatedOnce(urls, token, id, race);
    }
    const identical = await raceCreate(urls, token, 2_000_000n, Array(8).fill('Same'));
    await assertCreatedOnce(urls, token, 2_000_000n, identical);
  });

  it('50 concurrent PUTs with the same If-Match, 25 through each: exactly one 200, 49 412s, the winner stored', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    for (let round = 0; round < 3; round++) {
      const id = 3_000_000n + BigInt(round);
      assert.equal((await postPlant(a.url, token, `{"id":${id},"name":"start"}`)).status, 200);
      const read = await send(b.url, { path: `/plants/${id}`, headers });
      const etag = read.headers.etag as string;
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          send(i % 2 ? a.url : b.url, {
            method: 'PUT',
            path: `/plants/${id}`,
            headers: { ...headers, 'if-match': etag },
            body: JSON.stringify({ name: `writer ${i}` }),
          }),
        ),
      );
      const statuses = answers.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(' '));
      assert.equal(statuses.filter((s) => s === 412).length, 49, statuses.join(' '));
      const winner = answers.find((r) => r.status === 200)!;
      const stored = await send(a.url, { path: `/plants/${id}`, headers });
      assert.equal(stored.text, `{"id":${id},"name":${JSON.stringify((winner.json as { name: string }).name)}}`);
      assert.equal(stored.headers.etag, winner.headers.etag);
    }
  });

  it('50 concurrent PUTs of one content, each with If-None-Match naming it, 25 through each: one 200, 49 412s', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    for (let round = 0; round < 3; round++) {
      const id = 3_100_000n + BigInt(round);
      assert.equal((await postPlant(a.url, token, `{"id":${id},"name":"start"}`)).status, 200);
      // "Set it to this unless it is this already": the ETag the plant has once renamed.
      const wanted = etagOf({ id, name: 'target' });
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          send(i % 2 ? a.url : b.url, {
            method: 'PUT',
            path: `/plants/${id}`,
            headers: { ...headers, 'if-none-match': wanted },
            body: '{"name":"target"}',
          }),
        ),
      );
      const statuses = answers.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(' '));
      assert.equal(statuses.filter((s) => s === 412).length, 49, statuses.join(' '));
    }
  });

  it('a token created with the CLI works on both within 1 s; revoked, it stops on both within 1 s', async () => {
    const created = await run(['token', 'create', '--name', 'ops', '--scope', 'plants:read']);
    assert.equal(created.status, 0, created.stderr);
    const fresh = created.stdout.trim();
    const onBoth = (want: number) => async () =>
      (await status(a.url, fresh)) === want && (await status(b.url, fresh)) === want;
    assert.ok(await pollUntil(onBoth(200), 1000), 'the new token works on both instances within 1 s');
    const tokens = JSON.parse((await run(['token', 'list', '--json'])).stdout) as { id: string; name: string }[];
    const id = tokens.find((t) => t.name === 'ops')!.id;
    assert.equal((await run(['token', 'revoke', id])).status, 0);
    assert.ok(await pollUntil(onBoth(401), 1000), 'the revoked token fails on both instances within 1 s');
    assert.equal(await status(a.url, token), 200, 'other tokens still work');
  });
});
