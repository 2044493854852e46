// What `backup --output` may name: a file. A backup is written beside it and renamed over it, so
// a name that is not a file (a directory, a device such as /dev/full or /dev/stdout, a named
// pipe) is refused in one line before the store is read, and left as it was: renamed over, the
// device or the pipe was replaced by a regular file (a device is not tried here: /dev/null
// replaced would break the machine). A link to a file keeps pointing at the backup. SQLite only:
// the store plays no part in it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../support/cli.js';
import { createMigratedTestStore, type TestStore } from '../support/stores.js';

describe('backup --output', () => {
  let store: TestStore;
  let dir: string;
  before(async () => {
    store = await createMigratedTestStore('sqlite');
    dir = mkdtempSync(join(tmpdir(), 'plant-store-backup-output-'));
  });
  after(async () => {
    await store?.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const backup = (output: string) => cli(['backup', '--output', output], { DATABASE_URL: store.databaseUrl });

  /** Exit 1 and one line naming what was wrong. */
  function assertRefused(r: Awaited<ReturnType<typeof backup>>, mentions: RegExp): void {
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /^plant-store: backup: [^\n]+\n$/);
    assert.match(r.stderr, mentions);
  }

  it('refuses a named pipe, and leaves it a pipe', async () => {
    const fifo = join(dir, 'a-pipe');
    execFileSync('mkfifo', [fifo]);
    assertRefused(await backup(fifo), /--output .*a-pipe is a named pipe, not a file/);
    assert.ok(lstatSync(fifo).isFIFO(), 'still a pipe');
  });

  it('refuses a directory, and an empty name', async () => {
    const sub = join(dir, 'a-dir');
    mkdirSync(sub);
    assertRefused(await backup(sub), /--output .*a-dir is a directory, not a file/);
    assert.ok(lstatSync(sub).isDirectory());
    assertRefused(await backup(''), /--output needs a file name/);
  });

  it('through a link to a file, replaces the file and keeps the link', async () => {
    const target = join(dir, 'store.backup');
    writeFileSync(target, 'an older backup\n');
    const link = join(dir, 'latest.backup');
    symlinkSync(target, link);
    const r = await backup(link);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link');
    assert.match(readFileSync(target, 'utf8'), /^\{"format":"plant-store-backup"/);
  });
});
