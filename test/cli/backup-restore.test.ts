// plant-store backup and restore: the whole store in one file, restored whole or not at all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { plantRecord } from '../../src/domain/plant.js';
import { KNOWN_SCHEMA_VERSIONS } from '../../src/store/schema-versions.js';
import { createToken } from '../../src/use-cases/create-token.js';
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
        await store.writePlants(PLANTS.map((plant) => ({ kind: 'create' as const, plant })));
        token = (await createToken(store, { name: 'api' })).token;
        await createToken(store, { name: 'reader', scopes: ['plants:read'], expiresAt: expires });
        const revoked = await createToken(store, { name: 'old' });
        await store.revokeToken(revoked.record.id, new Date('2025-02-01T00:00:00.000Z'));
        await store.insertEndpoint({
          id: 'ep_test',
          url: 'https://hooks.example/plants',
          events: ['plant.created', 'plant.deleted'],
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          enabled: true,
          disabledReason: null,
          createdAt: new Date('2025-01-02T03:04:05.678Z'),
        });
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
      assert.match(backup, /"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"/);
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
        assert.equal(await store.countPendingDeliveries(), 0, 'restored plants emit no webhook events');
        const [endpoint] = await store.listEndpoints(0);
        assert.equal(endpoint?.endpoint.enabled, true);
      });
      // The token made on the source store is one of the target's.
      await withStore(target, async (store) => {
        const { hashToken } = await import('../../src/domain/token.js');
        assert.equal((await store.findTokenByHash(hashToken(token)))?.name, 'api');
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
          const [endpoint] = await store.listEndpoints(0);
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
    // for its plants as objects: a restore or backup that held them would run out of heap. Names
    // near their 256-character limit make the file that size with a quarter of the plants (the
    // time is per plant); each name is one word, so the search indexes cost one entry a plant. The
    // young generation is capped too: Node 24 sizes it from the machine's memory (tens of MB), and
    // next to a 24 MB old space so large a young generation makes V8 collect the old space every
    // few milliseconds (a restore took 13 s of CPU instead of 6). Each command gets 2 minutes: on a
    // busy 2-core machine the PostgreSQL restore took more than 30 s.
    it(
      'streams: with the JavaScript heap capped at 24 MB, restores and backs up 100,000 plants (a 32 MB file)',
      { timeout: 300_000 },
      async () => {
        const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
        const { join } = await import('node:path');
        const { tmpdir } = await import('node:os');
        const count = 100_000;
        const lines = [header({ store: kind })];
        for (let i = 1; i <= count; i++) {
          const name = `plant${i}`.padEnd(250, 'abcdefghijklmnopqrstuvwxyz');
          lines.push(plantLine(BigInt(i) * 18_446_744_073_709n - 2n ** 62n, name, `tag ${i % 7}`));
        }
        const big = backupFile(lines);
        assert.ok(big.length > 30_000_000);
        const capped = { NODE_OPTIONS: '--max-old-space-size=24 --max-semi-space-size=1' };
        const limit = 120_000;
        const target = fresh();
        const r = runCli(['restore'], { ...env(target), ...capped }, big, undefined, limit);
        assert.equal(r.status, 0, r.signal ? `restore ended by ${r.signal}: ${r.stderr.slice(-400)}` : r.stderr);
        assert.match(r.stdout, /^restore: 100000 plants, 0 tokens, 0 webhook endpoints/);
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
      assert.equal((await cli(['token', 'create', '--name', 'x'], env(withToken))).status, 0);
      assertRefused(
        await cli(['restore'], env(withToken), backup),
        /the store is not empty \(0 plants, 1 token, 0 webhook endpoints\)/,
      );
      assert.deepEqual(await storeCounts(withToken), { plants: 0, tokens: 1, webhooks: 0 });

      const withPlant = fresh();
      assert.equal((await cli(['import'], env(withPlant), '{"id":5,"name":"five"}\n')).status, 0);
      assertRefused(await cli(['restore'], env(withPlant), backup), /not empty \(1 plant, 0 tokens/);
      assert.deepEqual(await storeCounts(withPlant), { plants: 1, tokens: 0, webhooks: 0 });
    });

    describe('refuses a bad backup in one line and leaves the store empty', () => {
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
          /line 2: a token's "scopes" must be a list of distinct values among plants:read, plants:write, metrics:read/,
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
          const target = fresh();
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
  });
}
