// What `npm pack` of the server package (the repository's root) would hold: the build, the
// document and the usual documents, never a store, a key or a workspace. It still holds the client
// as `plant-store/client`, kept for compatibility (CHANGELOG); the client's own package is
// packages/client (package.test.ts).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

// What the tarball may hold: the build, the document, the manifest and the usual documents.
const ALLOWED = /^(dist\/.+|openapi\/plant-store\.yaml|package\.json|README\.md|LICENSE|CHANGELOG\.md)$/;
// What it must never hold, wherever it sits: stores, keys, environment files, logs, exports.
const SECRET =
  /(\.db|\.db-wal|\.db-shm|\.env|\.pem|\.key|\.ndjson|\.log|\.tgz|\.npmrc)$|key\.json$|(^|\/)(data|idp|test-output)\//;

describe('the server package, packed', () => {
  it(`is plant-store-${version}.tgz with the server and plant-store/client, and nothing else`, async () => {
    // --dry-run: the list only. --ignore-scripts: `npm test` has built dist/ already.
    const packed = await run('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], {
      cwd: ROOT,
      timeout: 120_000,
    });
    const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    const files = info.files.map((f) => f.path);
    assert.equal(info.filename, `plant-store-${version}.tgz`);
    for (const needed of [
      'package.json',
      'dist/cli/main.js',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/json/read-json.js',
      'dist/console/index.html',
      'dist/console/console.js',
      'CHANGELOG.md',
    ])
      assert.ok(files.includes(needed), `${needed} is missing from the tarball`);
    assert.deepEqual(
      files.filter((f) => !ALLOWED.test(f)),
      [],
      'unexpected files',
    );
    assert.deepEqual(
      files.filter((f) => SECRET.test(f)),
      [],
      'files that may hold secrets',
    );
  });
});
