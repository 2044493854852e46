// The store's files: created owner-only (they hold token hashes and maybe webhook secrets); only
// the default ./data directory is created for you, so a mistyped path fails at once; a refused
// restore takes away the store it created.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from '../../../src/store/open-store.js';
import { createToken } from '../../../src/use-cases/create-token.js';
import { cli, runCli } from '../../support/cli.js';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the store files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-files-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('creates ./data (0700) and the store, its WAL and its shared memory (0600) by default', async () => {
    const r = runCli(['migrate'], { DATABASE_URL: undefined }, undefined, dir);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(mode(join(dir, 'data')), 0o700);
    // A clean close removes the WAL and the shared memory: they are looked at while open.
    const { store } = await openStore({
      databaseUrl: `sqlite:${join(dir, 'data', 'plant-store.db')}`,
      databasePoolSize: 1,
    });
    try {
      for (const file of ['plant-store.db', 'plant-store.db-wal', 'plant-store.db-shm']) {
        assert.equal(mode(join(dir, 'data', file)), 0o600, file);
      }
    } finally {
      await store.close();
    }
  });

  it('checkpoints after SQLITE_CHECKPOINT_PAGES pages of WAL, and so keeps the WAL that small', async () => {
    // The same 400 writes, one commit each, into two stores: one that checkpoints every 100 pages
    // (the WAL starts over from its beginning after each), one that never gets to.
    const walBytes = async (pages: number) => {
      const path = join(dir, `checkpoint-${pages}.db`);
      const { store } = await openStore({
        databaseUrl: `sqlite:${path}`,
        databasePoolSize: 1,
        sqliteCheckpointPages: pages,
      });
      try {
        for (let id = 1n; id <= 400n; id++)
          await store.plants.write({ kind: 'create', plant: { id, name: `plant ${id}` } });
        return statSync(`${path}-wal`).size;
      } finally {
        await store.close();
      }
    };
    const small = await walBytes(100);
    const large = await walBytes(1_000_000);
    // 100 pages, and the commit that went past them (the plant, its words, its change in the log).
    assert.ok(small < 120 * 4096 + 32 * 120, `WAL of ${small} bytes with checkpoints every 100 pages`);
    assert.ok(large > 400 * 4096, `WAL of ${large} bytes without checkpoints`);
  });

  it('refuses a store whose directory does not exist, in one line, creating nothing', async () => {
    const missing = join(dir, 'no', 'such', 'dir');
    const r = await cli(['migrate'], { DATABASE_URL: `sqlite:${join(missing, 'store.db')}` });
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      `plant-store: the store's directory ${missing} does not exist; create it first (only ./data is created for you)\n`,
    );
    assert.ok(!existsSync(join(dir, 'no')));
  });

  describe('a refused restore takes away the store it created, and nothing else', () => {
    const bad = 'not a backup\n';
    const refused = /^plant-store: restore refused, nothing was restored: line 1: not a plant-store backup/;

    it('a new file in an existing directory goes, with its WAL and shared memory', async () => {
      const home = mkdtempSync(join(dir, 'restore-'));
      const r = await cli(['restore'], { DATABASE_URL: `sqlite:${join(home, 'store.db')}` }, bad);
      assert.equal(r.status, 1);
      assert.match(r.stderr, refused);
      assert.deepEqual(readdirSync(home), []);
    });

    it('so does the default ./data directory when it made it; one that was there stays', () => {
      const home = mkdtempSync(join(dir, 'restore-'));
      const r = runCli(['restore'], { DATABASE_URL: undefined }, bad, home);
      assert.equal(r.status, 1);
      assert.match(r.stderr, refused);
      assert.deepEqual(readdirSync(home), []);

      mkdirSync(join(home, 'data'));
      assert.equal(runCli(['restore'], { DATABASE_URL: undefined }, bad, home).status, 1);
      assert.deepEqual(readdirSync(home), ['data']);
      assert.deepEqual(readdirSync(join(home, 'data')), []);
    });

    it('a store file that was there before stays', async () => {
      const path = join(mkdtempSync(join(dir, 'restore-')), 'store.db');
      assert.equal((await cli(['migrate'], { DATABASE_URL: `sqlite:${path}` })).status, 0);
      assert.equal((await cli(['restore'], { DATABASE_URL: `sqlite:${path}` }, bad)).status, 1);
      assert.ok(existsSync(path));
    });

    it('a new store that another process wrote to meanwhile (a server started on it) stays', async () => {
      const path = join(mkdtempSync(join(dir, 'restore-')), 'store.db');
      const { store } = await openStore({ databaseUrl: `sqlite:${path}`, databasePoolSize: 1 });
      const { store: other } = await openStore({ databaseUrl: `sqlite:${path}`, databasePoolSize: 1 });
      await createToken(other, { name: 'server' });
      await other.close();
      await store.files!.discardIfNew();
      const { store: again } = await openStore({ databaseUrl: `sqlite:${path}`, databasePoolSize: 1 });
      try {
        assert.equal(await again.tokens.count(), 1);
      } finally {
        await again.close();
      }
    });
  });
});
