// The command line under hostile or careless use: lifetimes that overflow, empty scopes, an
// operator's secret kept in clear, repeated revocations and removals, unsealed webhook secrets,
// `--json` listings and closed pipes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { buildTestApp } from '../helper.js';
import { cli, type CliResult } from '../support/cli.js';
import { CLI } from '../support/server.js';
import { createMigratedTestStore, createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

interface TokenView {
  id: string;
  name: string;
  scopes: string[];
  prefix: string | null;
  expires: string | null;
  revoked: string | null;
}

function assertOneLineFailure(r: CliResult, mentions: RegExp): void {
  assert.equal(r.status, 1, `expected exit 1: ${r.stdout} ${r.stderr}`);
  assert.match(r.stderr, /^plant-store: [^\n]+\n$/, `one stderr line, got ${JSON.stringify(r.stderr)}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, mentions);
}

/** Runs a command whose stdout reader has gone away before the command writes a byte. */
function withClosedStdout(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not exit in 30 s`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

for (const store of stores) {
  describe(`operator commands [${store}]`, suiteOptions(store), () => {
    const created: TestStore[] = [];
    after(() => Promise.all(created.map((s) => s.drop())));
    const fresh = async () => {
      const s = await createMigratedTestStore(store);
      created.push(s);
      return { DATABASE_URL: s.databaseUrl };
    };
    const list = async (env: Record<string, string>): Promise<TokenView[]> => {
      const r = await cli(['token', 'list', '--json'], env);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^\[.*\]\n$/s, 'one JSON document');
      return JSON.parse(r.stdout) as TokenView[];
    };

    describe('token create refuses what would loosen the token', () => {
      it('a lifetime past 10 years, however it is spelt, with one line (it used to overflow to "never")', async () => {
        const env = await fresh();
        for (const bad of ['99999999w', '999999999d', '3651d', '522w', '87601h', '5256001m', '315360001s']) {
          assertOneLineFailure(
            await cli(['token', 'create', '--name', 'x', '--expires-in', bad], env),
            /--expires-in must be at most 3650d \(10 years/,
          );
        }
        assert.deepEqual(await list(env), []);
      });

      it('a lifetime of no time, or not a lifetime at all, with one line saying what one looks like', async () => {
        const env = await fresh();
        for (const bad of ['0d', '0', '30', '1.5d', '-1d', '30 d', '30D', 'd', '']) {
          assertOneLineFailure(
            await cli(['token', 'create', '--name', 'x', '--expires-in', bad], env),
            /--expires-in must be a whole number from 1 with a unit \(s, m, h, d or w\)/,
          );
        }
        assert.deepEqual(await list(env), []);
      });

      it('a lifetime of exactly 10 years is accepted and dated 10 years ahead', async () => {
        const env = await fresh();
        for (const ok of ['3650d', '521w', '87600h']) {
          const r = await cli(['token', 'create', '--name', ok, '--expires-in', ok], env);
          assert.equal(r.status, 0, r.stderr);
        }
        const tenYears = 3650 * 86400e3;
        for (const t of await list(env)) {
          const left = Date.parse(t.expires!) - Date.now();
          assert.ok(left > tenYears - 8 * 86400e3 && left <= tenYears, `${t.name}: ${t.expires}`);
        }
      });

      // The rules restore holds a backup's tokens to: what token create makes, restore brings back.
      it('a name restore could not bring back, with one line (control characters, noncharacters)', async () => {
        const env = await fresh();
        for (const name of ['a\tb', 'a\u001b[2Jb', 'line\u2028break', 'a\ufffe', 'a\u{10ffff}', '🌿'.repeat(201)]) {
          assertOneLineFailure(await cli(['token', 'create', '--name', name], env), /^plant-store: --name must be /);
        }
        assert.deepEqual(await list(env), []);
      });

      it('a name of 200 characters, counted as code points as plant names are, and it restores', async () => {
        const env = await fresh();
        const name = '🌿'.repeat(200);
        assert.equal((await cli(['token', 'create', '--name', ` ${name} `], env)).status, 0);
        assert.deepEqual(
          (await list(env)).map((t) => t.name),
          [name],
          'trimmed',
        );
        const backup = await cli(['backup'], env);
        assert.equal(backup.status, 0, backup.stderr);
        const restored = await cli(['restore'], await fresh(), backup.stdout);
        assert.equal(restored.status, 0, restored.stderr);
      });

      it('an empty --scope, alone or among others, with one line (it used to grant every scope)', async () => {
        const env = await fresh();
        for (const scopes of [[''], [','], ['plants:read,'], [' '], ['plants:read', '']]) {
          const args = ['token', 'create', '--name', 'x', ...scopes.flatMap((s) => ['--scope', s])];
          assertOneLineFailure(await cli(args, env), /--scope needs a scope name/);
        }
        assert.deepEqual(await list(env), []);
      });
    });

    it("keeps no part of an operator's own token; a managed one shows pst_ and 4 characters", async () => {
      const env = await fresh();
      const secret = 'Sup3rSecretOperatorTok';
      // `serve` registers PLANT_STORE_TOKEN as it starts: the app built in-process on the store does
      // the same (test/helper.ts), without a process.
      await (await buildTestApp({ databaseUrl: env.DATABASE_URL, token: secret })).close();
      const managed = (await cli(['token', 'create', '--name', 'managed'], env)).stdout.trim();
      const rows = await list(env);
      const operator = rows.find((t) => t.name.includes('PLANT_STORE_TOKEN'))!;
      assert.equal(operator.prefix, null);
      assert.equal(rows.find((t) => t.name === 'managed')!.prefix, managed.slice(0, 8));
      const table = (await cli(['token', 'list'], env)).stdout;
      const json = (await cli(['token', 'list', '--json'], env)).stdout;
      for (const output of [table, json]) {
        for (let i = 0; i + 4 <= secret.length; i++) {
          assert.ok(!output.includes(secret.slice(i, i + 4)), `shows "${secret.slice(i, i + 4)}" of the secret`);
        }
      }
      assert.match(table, /\(own value\)/);
    });

    it('revoking twice says it was already revoked, when, and exits 0; an unknown id still fails', async () => {
      const env = await fresh();
      await cli(['token', 'create', '--name', 'gone'], env);
      const [row] = await list(env);
      const first = await cli(['token', 'revoke', row!.id], env);
      assert.equal(first.status, 0, first.stderr);
      assert.equal(first.stdout, `revoked ${row!.id}\n`);
      const revokedAt = (await list(env))[0]!.revoked!;
      const again = await cli(['token', 'revoke', row!.id], env);
      assert.equal(again.status, 0, again.stderr);
      assert.equal(again.stdout, `token ${row!.id} was already revoked at ${revokedAt}; nothing changed\n`);
      assert.equal((await list(env))[0]!.revoked, revokedAt, 'the first time is kept');
      assertOneLineFailure(await cli(['token', 'revoke', 'no-such-token'], env), /no-such-token/);
    });

    describe('webhooks', () => {
      const hookEnv = async () => ({ ...(await fresh()), WEBHOOK_ALLOW_PRIVATE: 'true' });

      it('add warns on stderr when WEBHOOK_SECRET_KEY is not set, and not when it is', async () => {
        const env = await hookEnv();
        const unsealed = await cli(['webhook', 'add', 'http://127.0.0.1:9/hook'], env);
        assert.equal(unsealed.status, 0, unsealed.stderr);
        assert.match(unsealed.stderr, /warning: WEBHOOK_SECRET_KEY is not set, so the secret is stored unsealed/);
        const key = Buffer.alloc(32, 3).toString('base64');
        const sealed = await cli(['webhook', 'add', 'http://127.0.0.1:9/hook'], { ...env, WEBHOOK_SECRET_KEY: key });
        assert.equal(sealed.status, 0, sealed.stderr);
        assert.doesNotMatch(sealed.stderr, /warning/);
      });

      it('add refuses a URL longer than 2048 characters, with one line, before opening the store', async () => {
        // No store yet: had the command opened it first, its line would say there is none.
        const s = createTestStore(store);
        created.push(s);
        const env = { DATABASE_URL: s.databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' };
        const url = `http://127.0.0.1:9/${'x'.repeat(2030)}`;
        assertOneLineFailure(await cli(['webhook', 'add', url], env), /the URL must be at most 2048 characters/);
        const [file] = env.DATABASE_URL.startsWith('sqlite:') ? [env.DATABASE_URL.slice('sqlite:'.length)] : [];
        if (file) assert.equal(existsSync(file), false, 'no store was created');
        assert.equal((await cli(['migrate'], env)).status, 0);
        const fits = await cli(['webhook', 'add', url.slice(0, 2048)], env);
        assert.equal(fits.status, 0, fits.stderr);
      });

      it('list --json is one JSON array; remove twice says so and exits 0', async () => {
        const env = await hookEnv();
        const ids: string[] = [];
        for (let i = 0; i < 2; i++) {
          ids.push((await cli(['webhook', 'add', 'http://127.0.0.1:9/hook'], env)).stdout.split('\n')[0]!);
        }
        const listed = await cli(['webhook', 'list', '--json'], env);
        assert.equal(listed.status, 0, listed.stderr);
        const parsed = JSON.parse(listed.stdout) as { endpoint: { id: string } }[];
        assert.ok(Array.isArray(parsed));
        assert.deepEqual(parsed.map((e) => e.endpoint.id).sort(), [...ids].sort());
        assert.equal((await cli(['webhook', 'remove', ids[0]!], env)).stdout, `removed ${ids[0]}\n`);
        const again = await cli(['webhook', 'remove', ids[0]!], env);
        assert.equal(again.status, 0, again.stderr);
        assert.match(again.stdout, /is not subscribed \(already removed, or never added\); nothing changed/);
        assertOneLineFailure(await cli(['webhook', 'remove', 'nonsense'], env), /not an endpoint id/);
        assert.equal((JSON.parse((await cli(['webhook', 'list', '--json'], env)).stdout) as unknown[]).length, 1);
      });
    });

    describe('a closed pipe ends a listing quietly, and fails a command whose output is its product', () => {
      // One store for these commands: they only read it. Something to print, whatever the command.
      let env: Record<string, string>;
      before(async () => {
        env = { ...(await fresh()), WEBHOOK_ALLOW_PRIVATE: 'true' };
        assert.equal((await cli(['import'], env, '{"id":1,"name":"a"}\n{"id":2,"name":"b"}\n')).status, 0);
        assert.equal((await cli(['token', 'create', '--name', 'a'], env)).status, 0);
        assert.equal((await cli(['webhook', 'add', 'http://127.0.0.1:9/hook'], env)).status, 0);
      });
      // A listing, a token or a secret is read or made whole before a byte is written: how the
      // command meets the closed pipe is the same on either store, so these run on SQLite only
      // (a process each). A backup and an export write while they read the store: both stores.
      const onSqlite = store === 'sqlite' ? {} : { skip: 'the store plays no part: SQLite only' };
      for (const args of [
        ['token', 'list'],
        ['token', 'list', '--json'],
        ['webhook', 'list'],
        ['webhook', 'list', '--json'],
      ]) {
        it(`plant-store ${args.join(' ')} | (a reader that has gone)`, onSqlite, async () => {
          const r = await withClosedStdout(args, env);
          assert.equal(r.stderr, '', 'nothing on stderr (no EPIPE, no stack trace)');
          assert.equal(r.code, 0);
        });
      }
      // The reader holds a truncated copy: a script must see the command fail.
      for (const [args, product] of [
        [['backup'], 'the backup'],
        [['export'], 'the export'],
      ] as const) {
        it(`plant-store ${args.join(' ')} | (a reader that has gone): exit 1, one line`, async () => {
          const r = await withClosedStdout([...args], env);
          assert.equal(r.stderr, `plant-store: the output was closed before ${product} was complete\n`);
          assert.equal(r.code, 1);
        });
      }
      // A token or a webhook secret is shown only once: the command says what it made and how
      // to take it back.
      it('plant-store token create | (a reader that has gone): exit 1, the id to revoke', onSqlite, async () => {
        const r = await withClosedStdout(['token', 'create', '--name', 'lost'], env);
        const id = /revoke it \(token revoke (\S+)\)\n$/.exec(r.stderr)?.[1];
        assert.match(r.stderr, /^plant-store: the output was closed before the new token was complete; it was created/);
        assert.equal(r.code, 1);
        const listed = JSON.parse((await cli(['token', 'list', '--json'], env)).stdout) as {
          id: string;
          name: string;
        }[];
        assert.equal(listed.find((t) => t.id === id)?.name, 'lost');
      });
      it('plant-store webhook add | (a reader that has gone): exit 1, the id to remove', onSqlite, async () => {
        const r = await withClosedStdout(['webhook', 'add', 'http://127.0.0.1:9/lost'], env);
        assert.match(
          r.stderr,
          /\nplant-store: the output was closed before the secret was complete; the endpoint was added: remove it \(webhook remove \S+\)\n$/,
        );
        assert.equal(r.code, 1);
      });
    });
  });
}
