// `plant-store --version` and `-V`: the version of the installed package, read from its
// package.json when the command runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

describe('plant-store --version', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  for (const flag of ['--version', '-V']) {
    it(`${flag} prints the package's version alone and exits 0, without touching a store`, () => {
      // A store that cannot be opened: the flag must not need one.
      const r = runCli([flag], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, `${version}\n`);
      assert.equal(r.stderr, '');
    });
  }

  it('runs as a program, as `npx plant-store` in the checkout runs it (its execute bit set by the build)', () => {
    const r = spawnSync(join(ROOT, 'dist/cli/main.js'), ['--version'], { encoding: 'utf8' });
    assert.equal(r.error, undefined, String(r.error));
    assert.equal(r.stdout, `${version}\n`);
  });

  it('reads package.json when it runs: a copy of the build beside another package.json prints its version', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-version-'));
    dirs.push(dir);
    cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...manifest, version: '9.8.7-test.1' }));
    const r = spawnSync(process.execPath, [join(dir, 'dist/cli/main.js'), '--version'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '9.8.7-test.1\n');
  });

  it('is listed in --help', () => {
    const r = runCli(['--help']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /-V, --version/);
  });
});
