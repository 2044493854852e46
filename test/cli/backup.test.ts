import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../support/cli.js';

describe('export and import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-backup-'));
  const a = { DATABASE_URL: `sqlite:${join(dir, 'a.db')}` };
  const b = { DATABASE_URL: `sqlite:${join(dir, 'b.db')}` };
  after(() => rmSync(dir, { recursive: true, force: true }));

  const plants = [
    '{"id":-9223372036854775808,"name":"min","tag":""}',
    '{"id":-1,"name":"Fern 🌿","tag":"green"}',
    '{"id":9007199254740993,"name":"past 2^53"}',
    '{"id":9223372036854775807,"name":"max","tag":"quote \\" and \\\\ backslash"}',
  ];

  it('round-trips a store exactly, ids above 2^53 included', () => {
    const imported = runCli(['import'], a, `${[...plants].reverse().join('\n')}\n`);
    assert.equal(imported.status, 0, imported.stderr);
    assert.match(imported.stdout, /4 created, 0 skipped/);
    const exported = runCli(['export'], a);
    assert.equal(exported.status, 0);
    assert.equal(exported.stdout, `${plants.join('\n')}\n`);
    assert.equal(runCli(['import'], b, exported.stdout).status, 0);
    assert.equal(runCli(['export'], b).stdout, exported.stdout);
  });

  it('skips identical plants, refuses conflicting ones, reports bad lines by number, finishes the rest, exits 1', () => {
    const input = [
      plants[0],
      '{"id":-1,"name":"changed"}',
      '',
      'not json',
      '{"id":1.5,"name":"x"}',
      '{"id":2,"name":"two","id":3}',
      '{"id":77,"name":"new"}',
    ].join('\n');
    const r = runCli(['import'], a, input);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /1 created, 1 skipped \(identical\), 1 refused \(conflicting\), 3 invalid/);
    assert.match(r.stderr, /^line 2: plant -1 already exists/m);
    assert.match(r.stderr, /^line 4: invalid JSON/m);
    assert.match(r.stderr, /^line 5: id must be an integer/m);
    assert.match(r.stderr, /^line 6: .*duplicate member name "id"/m);
    const exported = runCli(['export'], a).stdout;
    assert.match(exported, /\{"id":-1,"name":"Fern 🌿","tag":"green"\}/, 'the conflicting plant is left as it was');
    assert.match(exported, /\{"id":77,"name":"new"\}/);
  });

  it('exports an empty store as nothing', () => {
    const r = runCli(['export'], { DATABASE_URL: `sqlite:${join(dir, 'empty.db')}` });
    assert.equal(r.status, 0);
    assert.equal(r.stdout, '');
  });
});
