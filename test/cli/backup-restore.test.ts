// plant-store backup and restore: the whole store in one file, restored whole or not at all.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { plantRecord } from '../../src/domain/plant.js';
import type { EventType } from '../../src/domain/webhook.js';
import { KNOWN_SCHEMA_VERSIONS } from '../../src/store/schema-versions.js';
import { loadDocument } from '../../src/openapi/document.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { restoreStore } from '../../src/use-cases/restore.js';
import { backupFile, backupLines, header, storeCounts, withStore } from '../support/backup-file.js';
import { cli, runCli, type CliResult } from '../support/cli.js';
import { createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

const PLANTS = [
  plantRecord(-(2n ** 63n), 'min', ''),
  plantRecord(-1n, 'Fern 🌿', 'green'),
  plantRecord(9007199254740993n, 'past 2^53', undefined),
  plantRecord(2n ** 63n - 1n, 'max', 'quote " and \\ backslash'),
];

/** Fails with exactly one line on stderr, nothing on stdout, and no stack trace. */
function assertRefused(r: CliResult, mentions: RegExp): void {
  assert.equal(r.status, 1, `expected exit 1, got ${r.status}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, /^plant-store: [^\n]+\n$/, `expected one stderr line, got ${JSON.stringify(r.stderr)}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, mentions);
}

/** A secret as `webhook add` makes one: whsec_ and 32 bytes in base64. */
const SECRET = 'whsec_AwoRGB8mLTQ7QklQV15lbHN6gYiPlp2kq7K5wMfO1dw=';
/** A token and an endpoint as `token create` and `webhook add` make them, as a backup writes them. */
const TOKEN = {
  type: 'token',
  id: '20c830ea13d3',
  name: 'api',
  hash: 'a'.repeat(64),
  prefix: 'pst_Tt0T',
  scopes: ['plants:read', 'metrics:read'],
  createdAt: '2025-01-02T03:04:05.678Z',
  expiresAt: '2034-12-31T03:04:05.678Z', // 3650 days after: the longest lifetime
  revokedAt: null,
};
const WEBHOOK = {
  type: 'webhook',
  id: 'ep_TestEndpoint0001',
  url: 'https://hooks.example/plants',
  events: ['plant.created', 'plant.deleted'] as EventType[],
  secret: SECRET,
  enabled: true,
  disabledReason: null,
  createdAt: '2025-01-02T03:04:05.678Z',
};

const webhookRules = { webhookAllowPrivate: false, webhookSecretKey: undefined };

const plantLine = (id: bigint | number, name: string, tag?: string) =>
  `{"type":"plant","id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}}`;

for (const kind of stores) {
  describe(`backup and restore [${kind}]`, suiteOptions(kind), () => {
    const created: TestStore[] = [];
    const fresh = () => {
      const s = createTestStore(kind);
      created.push(s);
      return s.databaseUrl;
    };
    const env = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl });
    const empty = { plants: 0, tokens: 0, webhooks: 0 };
    let source: string;
    let token: string;
    let backup: string;
    const expires = new Date(Date.now() + 30 * 86_400_000 + 123);

    before(async () => {
      source = fresh();
      await withStore(source, async (store) => {
        await store.plants.writeAll(PLANTS.map((plant) => ({ kind: 'create' as const, plant })));
        token = (await createToken(store, { name: 'api' })).token;
        await createToken(store, { name: 'reader', scopes: ['plants:read'], expiresAt: expires });
        const revoked = await createToken(store, { name: 'old' });
        await store.tokens.revoke(revoked.record.id, new Date('2025-02-01T00:00:00.000Z'));
        const { type: _, ...endpoint } = WEBHOOK;
        await store.webhooks.insertEndpoint({ ...endpoint, createdAt: new Date(endpoint.createdAt) });
      });
      const r = await cli(['backup'], env(source));
      assert.equal(r.status, 0, r.stderr);
      backup = r.stdout;
    });
    after(() => Promise.all(created.map((s) => s.drop())));

    it('writes a header, tokens as stored, webhooks with their secrets, plants by id with exact ids, and an end record', () => {
      const lines = backupLines(backup);
      const head = JSON.parse(lines[0]!) as Record<string, unknown>;
      assert.equal(head.format, 'plant-store-backup');
      assert.equal(head.version, 1);
      assert.equal(head.store, kind);
      assert.equal(head.schema, KNOWN_SCHEMA_VERSIONS[kind]);
      assert.match(String(head.takenAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const types = lines.slice(1).map((l) => (JSON.parse(l) as { type: string }).type);
      assert.deepEqual(types, ['token', 'token', 'token', 'webhook', 'plant', 'plant', 'plant', 'plant', 'end']);
      assert.deepEqual(
        lines.slice(5, 9),
        PLANTS.map((p) => plantLine(p.id, p.name, p.tag)),
      );
      assert.ok(!backup.includes(token), 'never a token itself');
      assert.ok(backup.includes(`"secret":"${SECRET}"`));
      assert.match(backup, /"revokedAt":"2025-02-01T00:00:00.000Z"/);
      assert.ok(
        backup.includes(`"scopes":["plants:read"],`) && backup.includes(`"expiresAt":"${expires.toISOString()}"`),
        'the expiry, to the millisecond',
      );
      assert.match(lines.at(-1)!, /^\{"type":"end","plants":4,"tokens":3,"webhooks":1,"sha256":"[0-9a-f]{64}"\}$/);
    });

    const other = kind === 'sqlite' ? 'postgres' : 'sqlite';
    it(
      `restores into an empty ${other} store the same plants, tokens and subscribers`,
      suiteOptions(other),
      async () => {
        const target = createTestStore(other);
        created.push(target);
        const r = await cli(['restore'], env(target.databaseUrl), backup);
        assert.equal(r.status, 0, r.stderr);
        assert.match(
          r.stdout,
          new RegExp(`^restore: 4 plants, 3 tokens, 1 webhook endpoint .*\\(plant-store [^ ]+, ${kind} schema`),
        );
        const again = await cli(['backup'], env(target.databaseUrl));
        assert.equal(again.status, 0, again.stderr);
        assert.equal((JSON.parse(backupLines(again.stdout)[0]!) as { store: string }).store, other);
        assert.deepEqual(backupLines(again.stdout).slice(1, -1), backupLines(backup).slice(1, -1));
      },
    );

    it('restores into an empty store exactly what the backup holds, and writes no webhook event', async () => {
      const target = fresh();
      const r = await cli(['restore'], env(target), backup);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^restore: 4 plants, 3 tokens, 1 webhook endpoint from a backup of /);
      // The restored store backs up to the same records: the same plants, tokens and subscribers.
      const again = await cli(['backup'], env(target));
      assert.equal(again.status, 0, again.stderr);
      assert.deepEqual(backupLines(again.stdout).slice(1, -1), backupLines(backup).slice(1, -1));
      await withStore(target, async (store) => {
        assert.equal(await store.webhooks.countPendingDeliveries(), 0, 'restored plants emit no webhook events');
        const [endpoint] = await store.webhooks.listEndpoints(0);
        assert.equal(endpoint?.endpoint.enabled, true);
      });
      // The token made on the source store is one of the target's.
      await withStore(target, async (store) => {
        const { hashToken } = await import('../../src/domain/token.js');
        assert.equal((await store.tokens.findByHash(hashToken(token)))?.name, 'api');
      });
    });

    it('restores from --input, and a disabled endpoint stays disabled with its reason', async () => {
      const lines = backupLines(backup).slice(0, -1);
      const webhook = lines.findIndex((l) => l.startsWith('{"type":"webhook"'));
      lines[webhook] = lines[webhook]!.replace(
        '"enabled":true,"disabledReason":null',
        '"enabled":false,"disabledReason":"the endpoint answered 410 Gone"',
      );
      const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { tmpdir } = await import('node:os');
      const dir = mkdtempSync(join(tmpdir(), 'plant-store-backup-'));
      try {
        writeFileSync(join(dir, 'store.backup'), backupFile(lines));
        const target = fresh();
        const r = await cli(['restore', '--input', join(dir, 'store.backup')], env(target));
        assert.equal(r.status, 0, r.stderr);
        await withStore(target, async (store) => {
          const [endpoint] = await store.webhooks.listEndpoints(0);
          assert.equal(endpoint?.endpoint.enabled, false);
          assert.equal(endpoint?.endpoint.disabledReason, 'the endpoint answered 410 Gone');
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('writes --output owner-only, and only once the backup is whole', async () => {
      const { mkdtempSync, readFileSync, statSync, readdirSync, rmSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { tmpdir } = await import('node:os');
      const dir = mkdtempSync(join(tmpdir(), 'plant-store-backup-'));
      try {
        const file = join(dir, 'store.backup');
        const r = await cli(['backup', '--output', file], env(source));
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /^backup: 4 plants, 3 tokens, 1 webhook endpoint as of /);
        assert.equal(statSync(file).mode & 0o777, 0o600);
        assert.deepEqual(backupLines(readFileSync(file, 'utf8')).slice(1, -1), backupLines(backup).slice(1, -1));
        assert.deepEqual(readdirSync(dir), ['store.backup'], 'no partial file left behind');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    // The cap leaves room for Node's own start (about 12 MB on Node 24) but not for the file, nor
    // for its plants as objects: a restore or backup that held them would run out of heap (each
    // did, SIGABRT, when made to hold every record before writing). Names and tags at their
    // limits (256 and 64 characters) make the file that size with the fewest plants (the time is
    // per plant: 100,000 shorter ones cost twice as much, and both breaks fail with 50,000); each name is
    // one word, so the search indexes cost one entry a plant. The
    // young generation is capped too: Node 24 sizes it from the machine's memory (tens of MB), and
    // next to a 24 MB old space so large a young generation makes V8 collect the old space every
    // few milliseconds (a restore took 13 s of CPU instead of 6). Each command gets 2 minutes: on a
    // busy 2-core machine the PostgreSQL restore took more than 30 s.
    it(
      'streams: with the JavaScript heap capped at 24 MB, restores and backs up 50,000 plants (a 19 MB file)',
      { timeout: 300_000 },
      async () => {
        const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
        const { join } = await import('node:path');
        const { tmpdir } = await import('node:os');
        const count = 50_000;
        const lines = [header({ store: kind })];
        for (let i = 1; i <= count; i++) {
          const name = `plant${i}`.padEnd(256, 'abcdefghijklmnopqrstuvwxyz');
          const tag = `tag ${i % 7} `.padEnd(64, 'abcdefghijklmnopqrstuvwxyz');
          lines.push(plantLine(BigInt(i) * 18_446_744_073_709n - 2n ** 62n, name, tag));
        }
        const big = backupFile(lines);
        assert.ok(big.length > 19_000_000);
        const capped = { NODE_OPTIONS: '--max-old-space-size=24 --max-semi-space-size=1' };
        const limit = 120_000;
        const target = fresh();
        const r = runCli(['restore'], { ...env(target), ...capped }, big, undefined, limit);
        assert.equal(r.status, 0, r.signal ? `restore ended by ${r.signal}: ${r.stderr.slice(-400)}` : r.stderr);
        assert.match(r.stdout, /^restore: 50000 plants, 0 tokens, 0 webhook endpoints/);
        const dir = mkdtempSync(join(tmpdir(), 'plant-store-backup-'));
        try {
          const file = join(dir, 'big.backup');
          const again = runCli(
            ['backup', '--output', file],
            { ...env(target), ...capped },
            undefined,
            undefined,
            limit,
          );
          assert.equal(
            again.status,
            0,
            again.signal ? `backup ended by ${again.signal}: ${again.stderr.slice(-400)}` : again.stderr,
          );
          assert.deepEqual(backupLines(readFileSync(file, 'utf8')).slice(1, -1), backupLines(big).slice(1, -1));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );

    it('refuses a store that is not empty, in one line, and changes nothing', async () => {
      const withToken = fresh();
      assert.equal((await cli(['migrate'], env(withToken))).status, 0);
      assert.equal((await cli(['token', 'create', '--name', 'x'], env(withToken))).status, 0);
      assertRefused(
        await cli(['restore'], env(withToken), backup),
        /the store is not empty \(0 plants, 1 token, 0 webhook endpoints\)/,
      );
      assert.deepEqual(await storeCounts(withToken), { plants: 0, tokens: 1, webhooks: 0 });

      const withPlant = fresh();
      assert.equal((await cli(['migrate'], env(withPlant))).status, 0);
      assert.equal((await cli(['import'], env(withPlant), '{"id":5,"name":"five"}\n')).status, 0);
      assertRefused(await cli(['restore'], env(withPlant), backup), /not empty \(1 plant, 0 tokens/);
      assert.deepEqual(await storeCounts(withPlant), { plants: 1, tokens: 0, webhooks: 0 });
    });

    describe('refuses a bad backup in one line and leaves the store empty', () => {
      // One store for every case: each leaves it empty (checked), so the next sees an empty store
      // too; a store of its own each cost a migration each (seconds on PostgreSQL) and showed nothing more.
      let target: string;
      before(() => void (target = fresh()));
      const lines = () => backupLines(backup);
      const cases: [string, () => string, RegExp][] = [
        ['empty input', () => '', /the input is empty/],
        ['an export of plants, not a backup', () => '{"id":1,"name":"a"}\n', /line 1: not a plant-store backup/],
        [
          'truncated at a line boundary (no end record)',
          () =>
            lines()
              .slice(0, -1)
              .map((l) => `${l}\n`)
              .join(''),
          /the backup is truncated: it ends at line 9, without its end record/,
        ],
        [
          'truncated in the middle of a line',
          () => backup.slice(0, backup.indexOf('"name":"max"')),
          /line 9: the backup is truncated: its last line is cut short/,
        ],
        ['truncated in the end record', () => backup.slice(0, backup.length - 20), /line 10: the backup is truncated/],
        [
          'a line that is not JSON',
          () => backup.replace('"name":"past 2^53"', '"name":"past 2^53'),
          /line 8: invalid JSON at position \d+/,
        ],
        [
          'a line changed into other valid JSON (the checksum)',
          () => backup.replace('"name":"past 2^53"', '"name":"past 2^54"'),
          /line 10: the backup's checksum does not match its content/,
        ],
        [
          'a line removed',
          () =>
            lines()
              .filter((_, i) => i !== 6)
              .map((l) => `${l}\n`)
              .join(''),
          /checksum does not match/,
        ],
        [
          'an unknown format version',
          () => backupFile([header({ version: 2, plantStore: '9.0.0' }), ...lines().slice(1, -1)]),
          /line 1: the backup is in format version 2 \(written by plant-store 9\.0\.0\); this plant-store reads version 1 only/,
        ],
        [
          'a schema newer than this plant-store knows',
          () => backupFile([header({ store: kind, schema: 99 }), ...lines().slice(1, -1)]),
          new RegExp(
            `line 1: the backup's ${kind} schema is version 99 \\(written by plant-store 0\\.2\\.0\\), newer than this plant-store knows \\(${KNOWN_SCHEMA_VERSIONS[kind]}\\)`,
          ),
        ],
        [
          "a schema older than this plant-store's (its migrations may change data)",
          () => backupFile([header({ store: kind, schema: 2 }), ...lines().slice(1, -1)]),
          new RegExp(
            `line 1: the backup's ${kind} schema is version 2 \\(written by plant-store 0\\.2\\.0\\), older than this plant-store's \\(${KNOWN_SCHEMA_VERSIONS[kind]}\\): restore it with the plant-store that wrote it, then upgrade that store`,
          ),
        ],
        [
          'an unknown record type',
          () => backupFile([header(), plantLine(1, 'a'), '{"type":"delivery","id":"x"}', plantLine(2, 'b')]),
          /line 3: unknown record type "delivery"/,
        ],
        [
          'a plant the API would refuse',
          () => backupFile([header(), plantLine(1, 'a'), plantLine(2, 'x'.repeat(257))]),
          /line 3: name must have at most 256 characters/,
        ],
        [
          'a plant id out of range',
          () => backupFile([header(), plantLine(9223372036854775808n, 'a')]),
          /line 2: id must be an integer from -9223372036854775808 to 9223372036854775807/,
        ],
        [
          'the same plant id twice',
          () => backupFile([header(), plantLine(1, 'a'), plantLine(1, 'a')]),
          /line 3: plant 1 is out of order: plants come by id ascending, each once/,
        ],
        [
          'an unknown field',
          () => backupFile([header(), plantLine(1, 'a').replace('}', ',"colour":"green"}')]),
          /line 2: unknown field "colour" in a plant/,
        ],
        [
          'a token with a scope that does not exist',
          () => backupFile([header(), lines()[1]!.replace('"plants:read"', '"plants:admin"')]),
          /line 2: a token's "scopes" must name scopes among plants:read, plants:write, metrics:read \(not "plants:admin"\)/,
        ],
        [
          'counts that disagree with the records',
          () => backupFile([header(), plantLine(1, 'a')], { plants: 2, tokens: 0, webhooks: 0 }),
          /line 3: the end record counts 2 plants, the backup holds 1/,
        ],
        [
          'data after the end record',
          () => `${backup}${plantLine(1, 'a')}\n`,
          /line 11: data after the end record \(line 10\)/,
        ],
        // The lines of a backup are read by the reader of `import` (json/ndjson.ts), its rules held strictly.
        [
          'a line longer than 1 MiB',
          () => `${header()}\n${plantLine(1, 'x'.repeat(2 * 1024 * 1024))}`,
          /line 2: line is larger than the limit of 1048576 bytes/,
        ],
        ['a blank line', () => backupFile([header(), ' ', plantLine(1, 'a')]), /line 2: a blank line/],
        ['a record that is not a JSON object', () => backupFile([header(), '[1]']), /line 2: not a JSON object/],
        [
          'CRLF line endings (the checksum is of every byte)',
          () => backup.replaceAll('\n', '\r\n'),
          /line 10: the backup's checksum does not match its content/,
        ],
        [
          'a bad line after thousands of good ones (batches already inserted are rolled back)',
          () => {
            const many = Array.from({ length: 5000 }, (_, i) => plantLine(i + 1, `plant ${i + 1}`));
            return backupFile([header(), ...lines().slice(1, 5), ...many, plantLine(6000, '')]);
          },
          /line 5006: name must have at least 1 character/,
        ],
      ];
      for (const [what, input, message] of cases) {
        it(what, async () => {
          const r = await cli(['restore'], env(target), input());
          assertRefused(r, message);
          // The refusal says so; that it is true, the counts below check (they are what restore
          // itself looks at before it begins), so a second restore would add a process, not a check.
          if (what !== 'empty input' && !what.startsWith('an export')) {
            assert.match(r.stderr, /nothing was restored/);
          }
          assert.deepEqual(await storeCounts(target), empty);
        });
      }
    });

    it('stops reading a backup it refuses: the input is closed, not read to its end', async () => {
      const target = fresh();
      let served = 0;
      // A backup without end whose second line is refused.
      const input = new Readable({
        read() {
          served++;
          this.push(served === 1 ? `${header()}\n${plantLine(1, '')}\n` : `${plantLine(served, 'more')}\n`);
        },
      });
      await assert.rejects(
        withStore(target, (store) => restoreStore(store, loadDocument(), input, webhookRules)),
        /line 2: name must have at least 1 character/,
      );
      assert.ok(input.destroyed, `the input is still open after ${served} reads`);
      assert.deepEqual(await storeCounts(target), empty);
    });

    // The rules of token create and webhook add, the same functions: a backup is no way around them.
    describe('refuses a token or an endpoint that token create or webhook add would refuse, naming the line and field', () => {
      let target: string;
      before(() => void (target = fresh()));
      // One field changed at a time, in records that restore as they are (the first test).
      const tokenWith = (fields: Record<string, unknown>) => JSON.stringify({ ...TOKEN, ...fields });
      const webhookWith = (fields: Record<string, unknown>) => JSON.stringify({ ...WEBHOOK, ...fields });
      it('restores the token and the endpoint that each case below changes one field of', async () => {
        const restored = fresh();
        const r = await cli(['restore'], env(restored), backupFile([header(), tokenWith({}), webhookWith({})]));
        assert.equal(r.status, 0, r.stderr);
        const again = await cli(['backup'], env(restored));
        assert.deepEqual(backupLines(again.stdout).slice(1, -1), [tokenWith({}), webhookWith({})]);
      });
      /** A sealed secret's layout, `aes256gcm:<iv>:<ciphertext>:<tag>`, with parts of these byte lengths. */
      const sealed = (...bytes: number[]) =>
        ['aes256gcm', ...bytes.map((n) => Buffer.alloc(n, 1).toString('base64'))].join(':');
      const cases: [string, string[], RegExp][] = [
        [
          'a token with no scopes',
          [tokenWith({ scopes: [] })],
          /line 2: a token's "scopes" must name at least one scope/,
        ],
        [
          'a token with a scope twice',
          [tokenWith({ scopes: ['plants:read', 'plants:read'] })],
          /line 2: a token's "scopes" must name each scope once \(not "plants:read" twice\)/,
        ],
        [
          'a token with a 100 KB name',
          [tokenWith({ name: 'x'.repeat(100_000) })],
          /line 2: a token's "name" must be 1 to 200 characters/,
        ],
        [
          'a token with an empty name',
          [tokenWith({ name: '' })],
          /line 2: a token's "name" must be 1 to 200 characters/,
        ],
        ...['a\u0000b', 'a\u001b[2Jb', 'a\tb', 'a\nb', 'a\u2028b'].map((name): [string, string[], RegExp] => [
          `a token whose name holds ${JSON.stringify(name)}`,
          [tokenWith({ name })],
          /line 2: a token's "name" must be one line of printable text \(no control character such as NUL/,
        ]),
        [
          'a token whose name begins with white space',
          [tokenWith({ name: ' api' })],
          /line 2: a token's "name" must not begin or end with white space/,
        ],
        [
          'a token that lives more than 10 years',
          [tokenWith({ expiresAt: '2034-12-31T03:04:05.679Z' })],
          /line 2: a token's "expiresAt" must be at most 3650 days \(10 years\) after its creation/,
        ],
        [
          'a token that expires before it was created',
          [tokenWith({ expiresAt: TOKEN.createdAt })],
          /line 2: a token's "expiresAt" must be later than its creation/,
        ],
        [
          'a token created in year 0 (PostgreSQL cannot hold it)',
          [tokenWith({ createdAt: '0000-01-01T00:00:00.000Z' })],
          /line 2: a token's "createdAt" must be a time from 1970-01-01T00:00:00.000Z to year 9999/,
        ],
        [
          'a token revoked before 1970',
          [tokenWith({ revokedAt: '1969-12-31T23:59:59.999Z' })],
          /line 2: a token's "revokedAt" must be a time from 1970/,
        ],
        [
          'a token whose id token create would not make',
          [tokenWith({ id: 'x'.repeat(5000) })],
          /line 2: a token's "id" must be 12 lower-case hex digits/,
        ],
        [
          'a token with a long prefix',
          [tokenWith({ prefix: 'pst_'.padEnd(5000, 'x') })],
          /line 2: a token's "prefix" must be pst_ and 4 characters, or empty/,
        ],
        [
          'a token whose hash is not one',
          [tokenWith({ hash: 'A'.repeat(64) })],
          /line 2: a token's "hash" must be a SHA-256/,
        ],
        [
          'the same token id twice',
          [tokenWith({}), tokenWith({ hash: 'a'.repeat(64) })],
          /line 3: a second token with id "[0-9a-f]{12}"/,
        ],
        [
          'a webhook URL with a user name and password',
          [webhookWith({ url: 'https://user:secret@hooks.example/plants' })],
          /line 2: a webhook's "url" must not carry a user name or password/,
        ],
        [
          'a webhook URL that is not http(s)',
          [webhookWith({ url: 'file:///etc/passwd' })],
          /line 2: a webhook's "url" must be http:\/\/ or https:\/\//,
        ],
        [
          'a webhook URL longer than webhook add takes',
          [webhookWith({ url: `https://hooks.example/${'x'.repeat(2100)}` })],
          /line 2: a webhook's "url" must be at most 2048 characters/,
        ],
        [
          'a webhook URL not written as webhook add stores it',
          [webhookWith({ url: 'HTTPS://Hooks.Example:443/a b' })],
          /line 2: a webhook's "url" must be written as webhook add stores it \(https:\/\/hooks\.example\/a%20b\)/,
        ],
        [
          'a webhook URL on a loopback address, private addresses not allowed',
          [webhookWith({ url: 'http://[::ffff:7f00:1]:8080/hook' })],
          /line 2: a webhook's "url" is refused: ::ffff:7f00:1 is not a public address .*set WEBHOOK_ALLOW_PRIVATE=true/,
        ],
        ...['x', 'whsec_', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', `${SECRET}=`, sealed(12, 49, 16)].map(
          (secret): [string, string[], RegExp] => [
            `an unusable webhook secret ${JSON.stringify(secret.slice(0, 24))}…`,
            [webhookWith({ secret })],
            /line 2: a webhook's "secret" must be whsec_ and 32 bytes in base64, or that sealed with WEBHOOK_SECRET_KEY/,
          ],
        ),
        [
          'a webhook with no events',
          [webhookWith({ events: [] })],
          /line 2: a webhook's "events" must name at least one event, each once, among plant\.created/,
        ],
        [
          'a webhook whose id webhook add would not make (webhook remove could not take it)',
          [webhookWith({ id: 'hook 1' })],
          /line 2: a webhook's "id" must be ep_ and 16 characters/,
        ],
        [
          'an enabled webhook with a reason to be disabled',
          [webhookWith({ disabledReason: 'because' })],
          /line 2: a webhook's "disabledReason" must be null while the endpoint is enabled/,
        ],
        [
          'a disabled webhook without a reason',
          [webhookWith({ enabled: false })],
          /line 2: a webhook's "disabledReason" must say why the endpoint was disabled/,
        ],
        [
          'a disabled webhook whose reason holds NUL',
          [webhookWith({ enabled: false, disabledReason: 'gone\u0000' })],
          /line 2: a webhook's "disabledReason" must be one line of printable text/,
        ],
        [
          'a header whose writer is not a version (it is shown in messages)',
          [],
          /line 1: the header's "plantStore" must be a version such as 0\.2\.0/,
        ],
        ['a plant whose name holds NUL', [plantLine(1, 'a\u0000b')], /line 2: name must not contain the NUL character/],
        [
          'a plant whose tag is too long',
          [plantLine(1, 'a', 't'.repeat(65))],
          /line 2: tag must have at most 64 characters/,
        ],
      ];
      for (const [what, records, message] of cases) {
        it(what, async () => {
          const head = what.startsWith('a header') ? header({ plantStore: '\u001b[2J' }) : header();
          assertRefused(await cli(['restore'], env(target), backupFile([head, ...records])), message);
          assert.deepEqual(await storeCounts(target), empty);
        });
      }
      it('a plant whose name holds a lone surrogate or a noncharacter, as the API refuses it', async () => {
        for (const name of ['\\ud800', '\\ufffe', '\\ud83f\\udffe']) {
          const line = `{"type":"plant","id":1,"name":"a${name}"}`;
          assertRefused(await cli(['restore'], env(target), backupFile([header(), line])), /line 2: /);
        }
        assert.deepEqual(await storeCounts(target), empty);
      });
    });

    it('restores a webhook on a private address where WEBHOOK_ALLOW_PRIVATE=true, as webhook add would add it', async () => {
      const lines = backupLines(backup).slice(0, -1);
      const i = lines.findIndex((l) => l.startsWith('{"type":"webhook"'));
      lines[i] = lines[i]!.replace('https://hooks.example/plants', 'http://127.0.0.1:8080/hook');
      const target = fresh();
      const r = await cli(['restore'], { ...env(target), WEBHOOK_ALLOW_PRIVATE: 'true' }, backupFile(lines));
      assert.equal(r.status, 0, r.stderr);
      await withStore(target, async (store) => {
        assert.equal((await store.webhooks.listEndpoints(0))[0]?.endpoint.url, 'http://127.0.0.1:8080/hook');
      });
    });
  });
}
