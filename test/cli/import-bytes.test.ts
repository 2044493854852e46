// `plant-store import` applies exactly the rules of POST /plants, bytes included: each line's
// bytes go to the same JSON reader (invalid UTF-8, encoded surrogates and noncharacters are
// refused, never replaced), lines longer than the body limit are refused, CRLF files read like
// LF files, and problems are reported in line order.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../helper.js';
import { readStoredPlantsAt } from '../support/db.js';
import { cli } from '../support/cli.js';
import { postPlant } from '../support/http.js';
import { createMigratedTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';
import { importPlants } from '../../src/use-cases/export-import.js';

/** `plant-store import` with these bytes as stdin (the command, run in this process). */
const importBytes = (input: Buffer, env: Record<string, string>) => cli(['import'], env, input);

async function exportAll(env: Record<string, string>): Promise<string> {
  const r = await cli(['export'], env);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

/** Lines the API refuses with 400 and import must refuse too: [what, the bytes of the body/line]. */
const HOSTILE: [string, Buffer][] = [
  ['Latin-1 é (not UTF-8)', bytes('{"id":9,"name":"caf', [0xe9], '"}')],
  ['an encoded surrogate (CESU-8 U+D800)', bytes('{"id":9,"name":"', [0xed, 0xa0, 0x80], '"}')],
  ['an overlong encoding of "/"', bytes('{"id":9,"name":"', [0xc0, 0xaf], '"}')],
  ['a truncated sequence', bytes('{"id":9,"name":"', [0xe2, 0x82], '"}')],
  ['a lone continuation byte', bytes('{"id":9,"name":"', [0x80], '"}')],
  ['U+FFFF raw', bytes('{"id":9,"name":"', [0xef, 0xbf, 0xbf], '"}')],
  ['U+FFFE escaped', bytes('{"id":9,"name":"\\ufffe"}')],
  ['U+FDD0 escaped', bytes('{"id":9,"name":"\\uFDD0"}')],
  ['U+10FFFF raw', bytes('{"id":9,"name":"', [0xf4, 0x8f, 0xbf, 0xbf], '"}')],
  ['a lone surrogate escape', bytes('{"id":9,"name":"\\ud800"}')],
  ['a byte order mark', bytes([0xef, 0xbb, 0xbf], '{"id":9,"name":"x"}')],
  ['a NUL in a string', bytes('{"id":9,"name":"a\\u0000b"}')],
];

for (const store of stores) {
  describe(`import reads bytes with the API's rules [${store}]`, suiteOptions(store), () => {
    const created: TestStore[] = [];
    let api: TestApp;
    const fresh = async (extra: Record<string, string> = {}) => {
      const s = await createMigratedTestStore(store);
      created.push(s);
      return { DATABASE_URL: s.databaseUrl, ...extra };
    };
    before(async () => {
      api = await buildTestApp({ store });
    });
    after(async () => {
      await api.close();
      await Promise.all(created.map((s) => s.drop()));
    });

    for (const [what, line] of HOSTILE) {
      it(`refuses ${what}, as POST /plants does, and stores nothing`, async () => {
        const posted = await postPlant(api, api.token, line);
        assert.equal(posted.status, 400, posted.text);
        const env = await fresh();
        const r = await importBytes(Buffer.concat([line, Buffer.from('\n')]), env);
        assert.equal(r.status, 1, r.stderr);
        assert.match(r.stdout, /0 created, 0 skipped \(identical\), 0 refused \(conflicting\), 1 invalid/);
        assert.match(r.stderr, /^line 1: /);
        // The same reason the API gives, word for word.
        assert.equal(r.stderr.trim(), `line 1: ${(posted.json as { message: string }).message}`);
        // Read in this process, the way `export` reads: a process of its own would check no more.
        assert.deepEqual(await readStoredPlantsAt(env.DATABASE_URL), []);
      });
    }

    it('takes valid UTF-8 as it is, CRLF lines too, and a last line without a newline', async () => {
      const env = await fresh();
      const input = bytes(
        '{"id":1,"name":"caf\u00e9"}\r\n',
        '{"id":2,"name":"Fern \u{1F33F}","tag":"\\u00e9"}\r\n',
        '\r\n',
        '{"id":3,"name":"last"}',
      );
      const r = await importBytes(input, env);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /3 created/);
      assert.equal(
        await exportAll(env),
        '{"id":1,"name":"café"}\n{"id":2,"name":"Fern 🌿","tag":"é"}\n{"id":3,"name":"last"}\n',
      );
    });

    it('reports problems in line order, a conflict on line 1 first, with the right line numbers', async () => {
      const env = await fresh();
      assert.equal((await importBytes(bytes('{"id":1,"name":"a"}\n'), env)).status, 0);
      const r = await importBytes(
        bytes('{"id":1,"name":"b"}\r\n', 'not json\n', '{"id":2,"name":"caf', [0xe9], '"}\n', '{"id":3,"name":"ok"}\n'),
        env,
      );
      assert.equal(r.status, 1);
      const lines = r.stderr.trim().split('\n');
      assert.deepEqual(
        lines.map((l) => l.split(':')[0]),
        ['line 1', 'line 2', 'line 3'],
      );
      assert.match(lines[0]!, /plant 1 already exists/);
      assert.match(lines[2]!, /not valid UTF-8/);
      assert.match(r.stdout, /1 created, 0 skipped \(identical\), 1 refused \(conflicting\), 2 invalid/);
    });

    it('refuses a line longer than the body limit, as the API answers 413, and goes on', async () => {
      const env = await fresh({ BODY_LIMIT_BYTES: '64' });
      const long = `{"id":1,"name":"${'x'.repeat(3 * 1024 * 1024)}"}`;
      const exact = `{"id":2,"name":"${'y'.repeat(64 - 18)}"}`;
      assert.equal(Buffer.byteLength(exact), 64);
      const r = await importBytes(bytes(long, '\n', exact, '\r\n', `{"id":3,"name":"${'z'.repeat(64)}"}`), env);
      assert.equal(r.status, 1, r.stderr);
      assert.equal(
        r.stderr,
        'line 1: line is larger than the limit of 64 bytes\nline 3: line is larger than the limit of 64 bytes\n',
      );
      assert.match(r.stdout, /1 created/);
    });
  });
}

describe('importPlants', () => {
  it('feeds importPlants line numbers that count blank and bad lines', async () => {
    const report = await importPlants(
      undefined as never,
      (await import('../../src/openapi/document.js')).loadDocument(),
      [Buffer.from('  '), Buffer.from('{'), { tooLong: 99 }],
      { maxLineBytes: 10 },
    );
    assert.deepEqual(report.invalid, [
      {
        line: 2,
        message: 'invalid JSON at position 1: expected a member name in double quotes but found end of input',
      },
      { line: 3, message: 'line is larger than the limit of 10 bytes' },
    ]);
  });
});
