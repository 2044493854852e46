// Only serve, migrate and restore create a store. Every other command, pointed at a store that
// does not exist, exits 1 with one line naming the DATABASE_URL it resolved, and creates nothing:
// no file, no directory, no schema, no table. A start refused before it serves leaves no file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli, runCli, type CliResult } from '../support/cli.js';
import {
  behindPgBouncer,
  createTestStore,
  POSTGRES_URL,
  postgresSql,
  suiteOptions,
  type TestStore,
} from '../support/stores.js';

/** Every command that works on a store, but migrate and restore (which create one). */
const COMMANDS = [
  ['token', 'list'],
  ['token', 'create', '--name', 'x'],
  ['token', 'revoke', 'tok_x'],
  ['webhook', 'list'],
  ['webhook', 'add', 'http://127.0.0.1:9/hook'],
  ['webhook', 'remove', 'ep_0123456789abcdef'],
  ['export'],
  ['import'],
  ['backup'],
];

const dirs: string[] = [];
const stores: TestStore[] = [];
after(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await Promise.all(stores.map((s) => s.drop()));
});

function emptyDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-no-store-'));
  dirs.push(dir);
  return dir;
}

function assertNoStore(r: CliResult, databaseUrl: string, what: RegExp): void {
  assert.equal(r.status, 1, r.stdout);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^plant-store: no store at [^\n]+\n$/, r.stderr);
  assert.ok(r.stderr.includes(`DATABASE_URL=${databaseUrl}`), r.stderr);
  assert.match(r.stderr, what);
  assert.match(r.stderr, /plant-store migrate/);
}

describe('commands on a SQLite store that does not exist', () => {
  it('token list from an empty directory names the default and where it is, and creates no ./data', () => {
    const dir = emptyDir();
    const r = runCli(['token', 'list'], { DATABASE_URL: undefined }, undefined, dir);
    assertNoStore(r, 'sqlite:./data/plant-store.db (not set: the default)', /data\/plant-store\.db does not exist/);
    assert.ok(r.stderr.includes(join(dir, 'data', 'plant-store.db')), r.stderr);
    assert.deepEqual(readdirSync(dir), []);
  });

  it('every command but migrate and restore fails the same way, creating no file', async () => {
    const dir = emptyDir();
    const databaseUrl = `sqlite:${join(dir, 'plant-store.db')}`;
    for (const args of COMMANDS) {
      const r = await cli(args, { DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' }, '{"id":1,"name":"a"}\n');
      assertNoStore(r, databaseUrl, /does not exist/);
      assert.deepEqual(readdirSync(dir), [], args.join(' '));
    }
  });

  it('an empty file is no store either, and is left as it is', async () => {
    const dir = emptyDir();
    const file = join(dir, 'plant-store.db');
    writeFileSync(file, '');
    const r = await cli(['token', 'list'], { DATABASE_URL: `sqlite:${file}` });
    assertNoStore(r, `sqlite:${file}`, /is empty/);
    assert.deepEqual(readdirSync(dir), ['plant-store.db']);
    assert.equal(statSync(file).size, 0);
  });
});

describe('commands on a PostgreSQL store that does not exist', suiteOptions('postgres'), () => {
  const tablesIn = async (schema: string) =>
    Number((await postgresSql(`SELECT count(*) AS n FROM pg_tables WHERE schemaname = '${schema}'`)).rows[0].n);
  const schemaExists = async (schema: string) =>
    (await postgresSql(`SELECT 1 FROM pg_namespace WHERE nspname = '${schema}'`)).rowCount === 1;

  it('a missing ?schema= is named, and not created, by every command; the password is never shown', async () => {
    const s = createTestStore('postgres');
    stores.push(s);
    const url = new URL(s.databaseUrl);
    url.password = 'hunter2';
    const schema = url.searchParams.get('schema')!;
    for (const args of COMMANDS) {
      const r = await cli(args, { DATABASE_URL: url.href, WEBHOOK_ALLOW_PRIVATE: 'true' }, '{"id":1,"name":"a"}\n');
      assertNoStore(
        r,
        url.href.replace('postgres:hunter2@', 'postgres:***@'),
        new RegExp(`the schema "${schema}" does not exist`),
      );
      assert.doesNotMatch(r.stderr, /hunter2/);
    }
    assert.equal(await schemaExists(schema), false);
    // Nor one given as a parameter, as libpq takes it too.
    const asParameter = new URL(s.databaseUrl);
    asParameter.searchParams.set('password', 'hunter2');
    const r = await cli(['token', 'list'], { DATABASE_URL: asParameter.href });
    assert.match(r.stderr, /&password=\*\*\*:/);
    assert.doesNotMatch(r.stderr, /hunter2/);
  });

  it('a schema without the store in it is no store: nothing is created in it', async () => {
    const s = createTestStore('postgres');
    stores.push(s);
    const schema = new URL(s.databaseUrl).searchParams.get('schema')!;
    await postgresSql(`CREATE SCHEMA ${schema}`);
    const r = await cli(['token', 'create', '--name', 'x'], { DATABASE_URL: s.databaseUrl });
    assertNoStore(r, s.databaseUrl, /holds no plant-store tables/);
    assert.equal(await tablesIn(schema), 0);
  });

  // A pooler answers for its own databases: PgBouncer passes the server's refusal on as 08P01,
  // then holds the next logins to that database for its server_login_retry, so a command there
  // is told the store is unavailable (a connection time-out), which is all the pooler lets it know.
  const databaseOptions = behindPgBouncer && { skip: 'PgBouncer answers for the databases it serves' };
  it(
    'a database that does not exist is named with the URL, as a missing schema is',
    { ...databaseOptions },
    async () => {
      const url = new URL(POSTGRES_URL);
      url.pathname = `/plant_store_no_db_${randomBytes(6).toString('hex')}`;
      for (const args of [['token', 'list'], ['export']]) {
        const r = await cli(args, { DATABASE_URL: url.href });
        assertNoStore(r, url.href, /the database "plant_store_no_db_[0-9a-f]+" does not exist/);
      }
    },
  );
});

describe('a start refused before it serves leaves no file behind', () => {
  const hooks = emptyDir();

  it('on a Node.js whose Node-API is older than the SQLite driver needs', () => {
    // The version check reads process.versions.napi: this preload makes it a Node 20's.
    const oldNode = join(hooks, 'node-api-9.mjs');
    writeFileSync(oldNode, "Object.defineProperty(process.versions, 'napi', { value: '9' });\n");
    const dir = emptyDir();
    const r = runCli(
      ['serve', '--port', '0'],
      { DATABASE_URL: undefined, NODE_OPTIONS: `--import=${oldNode}` },
      undefined,
      dir,
    );
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^plant-store: [^\n]*Node-API 10[^\n]*\n$/);
    assert.deepEqual(readdirSync(dir), [], 'the refused start left a file behind');
  });

  it('with a JWKS file that cannot be read', () => {
    const dir = emptyDir();
    const env = {
      DATABASE_URL: undefined,
      JWT_JWKS_FILE: join(dir, 'missing-jwks.json'),
      JWT_ISSUER: 'https://idp.example',
      JWT_AUDIENCE: 'plant-store',
    };
    const r = runCli(['serve', '--port', '0'], env, undefined, dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^plant-store: [^\n]*missing-jwks\.json[^\n]*\n$/);
    assert.deepEqual(readdirSync(dir), [], 'the refused start left a file behind');
  });
});
