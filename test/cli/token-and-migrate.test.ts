// The command-line tool: token create/list/revoke, migrate, and the
// one-line failures on bad input and bad configuration.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cli, runCli, type CliResult } from '../support/cli.js';
import { createMigratedTestStore, createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

const TOKEN_LINE = /^pst_[A-Za-z0-9_-]{43}\n$/;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** Exits non-zero with exactly one line on stderr, and nothing on stdout. */
function assertOneLineFailure(r: CliResult, mentions?: RegExp): void {
  assert.notEqual(r.status, 0, `expected a failure, got 0: ${r.stdout}`);
  assert.notEqual(r.status, null, 'the command did not exit (killed or timed out)');
  assert.match(r.stderr, /^[^\n]+\n$/, `expected one stderr line, got ${JSON.stringify(r.stderr)}`);
  assert.equal(r.stdout, '');
  assert.doesNotMatch(r.stderr, /\bat .*:\d+:\d+/, 'a stack trace');
  if (mentions) assert.match(r.stderr, mentions);
}

interface TokenView {
  id: string;
  name: string;
  scopes: string[];
  prefix: string;
  created: string;
  expires: string | null;
  revoked: string | null;
}

async function listJson(db: string): Promise<TokenView[]> {
  const r = await cli(['token', 'list', '--json'], { DATABASE_URL: db });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as TokenView[];
}

for (const store of stores) {
  describe(`the command-line tool [${store}]`, suiteOptions(store), () => {
    const created: TestStore[] = [];
    after(() => Promise.all(created.map((s) => s.drop())));

    /** A DATABASE_URL on a store that does not exist yet: a new SQLite file, or a new PostgreSQL schema. */
    function freshStore(): string {
      const s = createTestStore(store);
      created.push(s);
      return s.databaseUrl;
    }

    /** A DATABASE_URL on a new store, made (empty) as `migrate` makes one: the other commands make none. */
    async function madeStore(): Promise<string> {
      const s = await createMigratedTestStore(store);
      created.push(s);
      return s.databaseUrl;
    }

    describe('token create', () => {
      it('prints only the token on stdout', async () => {
        const db = await madeStore();
        const r = await cli(['token', 'create', '--name', 'ci'], { DATABASE_URL: db });
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, TOKEN_LINE);
        const r2 = await cli(
          [
            'token',
            'create',
            '--name',
            'ci2',
            '--scope',
            'plants:write',
            '--scope',
            'metrics:read',
            '--expires-in',
            '30d',
          ],
          { DATABASE_URL: db },
        );
        assert.equal(r2.status, 0, r2.stderr);
        assert.match(r2.stdout, TOKEN_LINE);
        assert.notEqual(r.stdout, r2.stdout);
      });

      it('a token without --scope has every scope; --scope limits it', async () => {
        const db = await madeStore();
        await cli(['token', 'create', '--name', 'all'], { DATABASE_URL: db });
        await cli(['token', 'create', '--name', 'ro', '--scope', 'plants:read'], { DATABASE_URL: db });
        const rows = await listJson(db);
        assert.deepEqual([...rows.find((t) => t.name === 'all')!.scopes].sort(), [
          'metrics:read',
          'plants:read',
          'plants:write',
        ]);
        assert.deepEqual(rows.find((t) => t.name === 'ro')!.scopes, ['plants:read']);
      });

      it('--scope nope fails with one line', async () => {
        const db = await madeStore();
        assertOneLineFailure(
          await cli(['token', 'create', '--name', 'x', '--scope', 'nope'], { DATABASE_URL: db }),
          /nope/,
        );
        assert.deepEqual(await listJson(db), []);
      });

      it('--expires-in banana fails with one line', async () => {
        const db = await madeStore();
        for (const bad of ['banana', '0s', '-1d', '1.5h', '']) {
          assertOneLineFailure(
            await cli(['token', 'create', '--name', 'x', '--expires-in', bad], { DATABASE_URL: db }),
            /expires-in/,
          );
        }
        assert.deepEqual(await listJson(db), []);
      });
    });

    describe('token list', () => {
      it('shows id, name, scopes, prefix, created, expires, revoked, never a token or its hash', async () => {
        const db = await madeStore();
        const env = { DATABASE_URL: db };
        const a = (await cli(['token', 'create', '--name', 'alpha'], env)).stdout.trim();
        const b = (
          await cli(['token', 'create', '--name', 'beta', '--scope', 'plants:read', '--expires-in', '2h'], env)
        ).stdout.trim();
        assert.match(a, /^pst_/);
        assert.match(b, /^pst_/);

        const rows = await listJson(db);
        assert.equal(rows.length, 2);
        for (const row of rows) {
          for (const key of ['id', 'name', 'scopes', 'prefix', 'created', 'expires', 'revoked']) {
            assert.ok(key in row, `token list --json lacks ${key}: ${JSON.stringify(row)}`);
          }
          assert.ok(!('hash' in row) && !('token' in row), JSON.stringify(row));
          assert.ok(!Number.isNaN(Date.parse(row.created)));
          assert.equal(row.revoked, null);
        }
        const alpha = rows.find((r) => r.name === 'alpha')!;
        const beta = rows.find((r) => r.name === 'beta')!;
        assert.ok(a.startsWith(alpha.prefix) && alpha.prefix.length < a.length, alpha.prefix);
        assert.ok(b.startsWith(beta.prefix) && beta.prefix.length < b.length, beta.prefix);
        assert.equal(alpha.expires, null);
        assert.ok(beta.expires !== null && Date.parse(beta.expires) > Date.parse(beta.created));

        const table = await cli(['token', 'list'], env);
        assert.equal(table.status, 0, table.stderr);
        for (const heading of ['ID', 'NAME', 'SCOPES', 'PREFIX', 'CREATED', 'EXPIRES', 'REVOKED']) {
          assert.match(table.stdout, new RegExp(`\\b${heading}\\b`, 'i'));
        }
        for (const row of rows) {
          assert.ok(table.stdout.includes(row.id) && table.stdout.includes(row.name), table.stdout);
        }
        const json = (await cli(['token', 'list', '--json'], env)).stdout;
        for (const output of [table.stdout, table.stderr, json]) {
          for (const token of [a, b]) {
            assert.ok(!output.includes(token), 'token list shows a token');
            assert.ok(!output.includes(token.slice(4)), 'token list shows the secret part of a token');
            assert.ok(!output.includes(sha256(token)), 'token list shows a token hash');
          }
        }
      });
    });

    describe('token revoke', () => {
      it('revokes a token by id, and the listing shows it', async () => {
        const db = await madeStore();
        await cli(['token', 'create', '--name', 'gone'], { DATABASE_URL: db });
        const [row] = await listJson(db);
        const r = await cli(['token', 'revoke', row!.id], { DATABASE_URL: db });
        assert.equal(r.status, 0, r.stderr);
        const after = (await listJson(db))[0]!;
        assert.ok(after.revoked !== null && !Number.isNaN(Date.parse(after.revoked)));
      });

      it('an unknown id fails with one line', async () => {
        const db = await madeStore();
        assertOneLineFailure(await cli(['token', 'revoke', 'no-such-token'], { DATABASE_URL: db }), /no-such-token/);
      });
    });

    describe('migrate', () => {
      it('migrates a fresh store, then says it is up to date', async () => {
        const db = freshStore();
        const first = await cli(['migrate'], { DATABASE_URL: db });
        assert.equal(first.status, 0, first.stderr);
        assert.doesNotMatch(first.stdout, /up to date/i);
        const second = await cli(['migrate'], { DATABASE_URL: db });
        assert.equal(second.status, 0, second.stderr);
        assert.match(second.stdout, /up to date/i);
      });

      it('commands other than serve never create a token', async () => {
        const db = freshStore();
        for (const args of [['migrate'], ['token', 'list'], ['token', 'list', '--json'], ['token', 'revoke', 'x']]) {
          await cli(args, { DATABASE_URL: db, PLANT_STORE_TOKEN: undefined });
        }
        const r = await cli(['token', 'list', '--json'], { DATABASE_URL: db, PLANT_STORE_TOKEN: undefined });
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stdout, '[]\n');
        assert.equal(r.stderr, '');
      });

      it('PLANT_STORE_TOKEN in the environment is not registered by other commands', async () => {
        const db = freshStore();
        await cli(['migrate'], {
          DATABASE_URL: db,
          PLANT_STORE_TOKEN: 'pst_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG',
        });
        assert.deepEqual(await listJson(db), []);
      });
    });

    // In-process (support/cli.ts: the program the built command runs, main.ts only hands it the
    // process's streams), but for one case in a process of its own: that the built command exits
    // non-zero with the one line. A process each showed nothing more, at half a second each.
    describe('bad configuration', () => {
      it('serve with PORT=abc fails with one line naming PORT, as a process too', () => {
        assertOneLineFailure(runCli(['serve'], { PORT: 'abc', DATABASE_URL: freshStore() }), /PORT/);
      });

      it('PORT out of range fails with one line naming PORT', async () => {
        assertOneLineFailure(await cli(['serve'], { PORT: '70000', DATABASE_URL: freshStore() }), /PORT/);
      });

      it('DATABASE_URL=mysql://x fails with one line naming DATABASE_URL', async () => {
        for (const args of [['serve'], ['migrate'], ['token', 'list']]) {
          assertOneLineFailure(await cli(args, { DATABASE_URL: 'mysql://x', PORT: '0' }), /DATABASE_URL/);
        }
      });

      it('a malformed PLANT_STORE_TOKEN fails with one line naming it, without echoing it', async () => {
        const r = await cli(['serve'], { PLANT_STORE_TOKEN: 'short secret', DATABASE_URL: freshStore(), PORT: '0' });
        assertOneLineFailure(r, /PLANT_STORE_TOKEN/);
        assert.doesNotMatch(r.stderr, /short secret/);
      });

      it('LOG_LEVEL=loud fails with one line naming LOG_LEVEL', async () => {
        assertOneLineFailure(
          await cli(['serve'], { LOG_LEVEL: 'loud', DATABASE_URL: freshStore(), PORT: '0' }),
          /LOG_LEVEL/,
        );
      });

      it('serve --port abc fails with one line naming the port', async () => {
        assertOneLineFailure(await cli(['serve', '--port', 'abc'], { DATABASE_URL: freshStore() }), /port/i);
      });

      it('a bad value does not leak a password from DATABASE_URL', async () => {
        const r = await cli(['migrate'], { DATABASE_URL: 'mysql://user:hunter2@db/x' });
        assertOneLineFailure(r, /DATABASE_URL/);
        assert.doesNotMatch(r.stderr, /hunter2/);
      });
    });

    describe('bad command lines (one clear line on bad input)', () => {
      for (const [what, args] of [
        ['token create without --name', ['token', 'create']],
        ['token create with an empty --name', ['token', 'create', '--name', ' ']],
        ['token revoke without an id', ['token', 'revoke']],
        ['an unknown option', ['token', 'list', '--bogus']],
        ['an unknown command', ['bogus']],
      ] as const) {
        it(`${what} fails with exactly one line`, async () => {
          // commander's own usage errors too, in the style of every failure.
          assertOneLineFailure(await cli([...args], { DATABASE_URL: freshStore() }), /^plant-store: /);
        });
      }
    });
  });
}
