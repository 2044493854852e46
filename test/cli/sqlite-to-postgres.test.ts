// Moving a store from SQLite to PostgreSQL with the two commands of docs/guides/scaling-out.md ("Moving from SQLite to
// PostgreSQL"): the clients' tokens and the subscribers keep working on the PostgreSQL server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { withStore } from '../support/backup-file.js';
import { cli } from '../support/cli.js';
import { postPlant, send } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { Receiver } from '../support/receiver.js';
import { CLI, startServer, type ServerProcess } from '../support/server.js';
import { createTestStore, suiteOptions, type TestStore } from '../support/stores.js';

const GUIDE = new URL('../../docs/guides/scaling-out.md', import.meta.url);

/** The commands of the guide's "Moving from SQLite to PostgreSQL" block that run plant-store. */
function readmeCommands(): string[] {
  const text = readFileSync(GUIDE, 'utf8');
  const section = text.slice(text.indexOf('## Moving from SQLite to PostgreSQL'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'the guide has the commands');
  return block.split('\n').filter((l) => l.startsWith('DATABASE_URL='));
}

describe("from SQLite to PostgreSQL with the guide's commands", suiteOptions('postgres'), () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('moves plants, tokens and subscribers: a SQLite token authenticates on the PostgreSQL server, webhooks are delivered', async () => {
    const hook = await new Receiver().start();
    cleanups.push(() => hook.close());
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-move-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const lite: TestStore = createTestStore('sqlite');
    const pg: TestStore = createTestStore('postgres');
    cleanups.push(
      () => lite.drop(),
      () => pg.drop(),
    );
    const env = {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_POLL_INTERVAL_MS: '100',
    };

    // The SQLite service, with a client's token, a revoked one, a subscriber and some plants.
    const sqliteServer: ServerProcess = await startServer({ databaseUrl: lite.databaseUrl, env });
    cleanups.push(() => sqliteServer.dispose());
    const run = (args: string[]) => cli(args, { DATABASE_URL: lite.databaseUrl, ...env });
    const client = await run([
      'token',
      'create',
      '--name',
      'client',
      '--scope',
      'plants:read',
      '--scope',
      'plants:write',
    ]);
    assert.equal(client.status, 0, client.stderr);
    const token = client.stdout.trim();
    const old = (await run(['token', 'create', '--name', 'old'])).stdout.trim();
    const oldId = (await withStore(lite.databaseUrl, (s) => s.tokens.list())).find((t) => t.name === 'old')!.id;
    assert.equal((await run(['token', 'revoke', oldId])).status, 0);
    const added = await run(['webhook', 'add', hook.url, '--events', 'created']);
    assert.equal(added.status, 0, added.stderr);
    const [endpointId, secret] = added.stdout.trim().split('\n') as [string, string];
    for (const body of ['{"id":9223372036854775807,"name":"Monstera"}', '{"id":-1,"name":"Fern","tag":""}']) {
      assert.equal((await postPlant(sqliteServer.url, token, body)).status, 200);
    }
    assert.ok(await pollUntil(async () => hook.accepted().length === 2, 15_000), 'the SQLite server delivered');

    // The guide's two commands, the SQLite server still running.
    const commands = readmeCommands();
    assert.equal(commands.length, 2, commands.join('\n'));
    for (const command of commands) {
      const line = command
        .replace('sqlite:./data/plant-store.db', lite.databaseUrl)
        .replace('postgres://postgres@127.0.0.1:5432/plants_moved', `'${pg.databaseUrl}'`)
        .replace('npx plant-store', `'${process.execPath}' '${CLI}'`);
      assert.notEqual(line, command);
      const r = spawnSync('bash', ['-c', line], { cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8' });
      assert.equal(r.status, 0, `${line}\n${r.stderr}`);
      if (command.includes('restore')) {
        assert.match(
          r.stdout,
          /^restore: 2 plants, 3 tokens, 1 webhook endpoint from a backup of .* sqlite schema \d+\)\n$/,
        );
        assert.equal(r.stderr, '', 'the key given opens the sealed secret: no warning');
      }
    }
    await sqliteServer.stop();

    // Restored where WEBHOOK_SECRET_KEY is not set, the sealed secret is kept, with a warning. (The
    // receiver is on loopback: allowed there too, as `webhook add` would need it.)
    const keyless = createTestStore('postgres');
    cleanups.push(() => keyless.drop());
    const elsewhere = await cli(['restore', '--input', join(dir, 'store.backup')], {
      DATABASE_URL: keyless.databaseUrl,
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    assert.equal(elsewhere.status, 0, elsewhere.stderr);
    assert.match(
      elsewhere.stderr,
      /^plant-store: 1 webhook secret of this backup is sealed with a WEBHOOK_SECRET_KEY that this environment does not have/,
    );

    // The PostgreSQL service, with the same WEBHOOK_SECRET_KEY, and no bootstrap token of its own.
    const pgServer = await startServer({ databaseUrl: pg.databaseUrl, env: { ...env, PLANT_STORE_TOKEN: undefined } });
    cleanups.push(() => pgServer.dispose());
    const read = await send(pgServer.url, {
      path: '/plants/9223372036854775807',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.text, '{"id":9223372036854775807,"name":"Monstera"}');
    const refused = await send(pgServer.url, { path: '/plants/-1', headers: { authorization: `Bearer ${old}` } });
    assert.equal(refused.status, 401, 'a revoked token stays revoked');
    const listed = await withStore(pg.databaseUrl, (s) => s.webhooks.listEndpoints(0));
    assert.deepEqual(
      listed.map((e) => [e.endpoint.id, e.endpoint.url, e.endpoint.events, e.endpoint.enabled, e.pending]),
      [[endpointId, hook.url, ['plant.created'], true, 0]],
      'the subscriber is listed, with nothing pending: restored plants emit no events',
    );

    // The subscriber receives the PostgreSQL server's events, signed with the secret it had.
    assert.equal((await postPlant(pgServer.url, token, '{"id":42,"name":"Pothos"}')).status, 200);
    assert.ok(await pollUntil(async () => hook.accepted().length === 3, 15_000), 'the PostgreSQL server delivered');
    const delivered = hook.accepted()[2]!;
    assert.equal(delivered.body, '{"id":42,"name":"Pothos"}');
    assert.ok(new Webhook(secret).verify(delivered.body, delivered.headers));
  });
});
