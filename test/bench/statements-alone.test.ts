// The batch section's ceilings (scripts/bench/statements-alone.ts): the store's own statements
// for batches of 1,000 creations, run with no server, on SQLite by sqlite-rows.mjs and on PostgreSQL
// by pgbench. Each must write what the store writes for such a batch, or the ceiling it gives
// bounds nothing: every plant, the words of its name (a search finds it) and a change of its own
// in the change log. Checked by opening the store afterwards and reading it as the server does.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { storeStatements } from '../../scripts/bench/statements-alone.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createMigratedTestStore, suiteOptions, type TestStore } from '../support/stores.js';

const run = promisify(execFile);
const FIRST = 5_000_000_000_000n;

/** What a store holds after the statements ran: its plants, those a search finds, its changes. */
async function holds(store: Store): Promise<{ plants: number; found: bigint[]; changes: bigint[] }> {
  const found = (await store.plants.list({ search: ['monstera'] }, 5000)).map((p) => p.id);
  const { floor, current } = await store.changes.bounds();
  const { changes } = await store.changes.read(floor - 1n, current, 5000, {});
  for (const c of changes) {
    assert.equal(c.type, 'created');
    assert.equal(c.body, `{"id":${c.id},"name":"Monstera","tag":"tropical"}`);
  }
  return { plants: await store.plants.count(), found, changes: changes.map((c) => c.id) };
}

describe("the bench's statements alone", () => {
  it('on SQLite, write each plant, its words and its change, as the store does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-rows-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'rows.db');
    const script = new URL('../../scripts/bench/sqlite-rows.mjs', import.meta.url).pathname;
    const { stdout } = await run(process.execPath, [script, path, '0.2', String(FIRST)]);
    const made = JSON.parse(stdout) as { plants: number; seconds: number; cpuMs: number };
    assert.ok(made.plants >= 1000 && made.plants % 1000 === 0, `made ${made.plants}`);
    assert.ok(made.cpuMs > 0);
    const { store } = await openStore({ databaseUrl: `sqlite:${path}`, databasePoolSize: 1 });
    try {
      const { plants, found, changes } = await holds(store);
      const ids = Array.from({ length: made.plants }, (_, i) => FIRST + BigInt(i));
      assert.equal(plants, made.plants);
      assert.deepEqual(found, ids.slice(0, Math.min(5000, made.plants)));
      assert.deepEqual(changes, ids.slice(0, Math.min(5000, made.plants)));
      assert.deepEqual(await store.plants.get(FIRST), { id: FIRST, name: 'Monstera', tag: 'tropical' });
    } finally {
      await store.close();
    }
  });

  describe('on PostgreSQL', suiteOptions('postgres'), () => {
    let s: TestStore | undefined;
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-rows-'));
    after(async () => {
      await s?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("are pgbench's script of a batch: each plant, its words and its change, as the store writes them", async () => {
      s = await createMigratedTestStore('postgres');
      const url = new URL(s.databaseUrl);
      const file = join(dir, 'store.sql');
      writeFileSync(file, storeStatements(url.searchParams.get('schema')!));
      const args = ['-n', '-t', '1', '-c', '1', '-f', file, '-h', url.hostname, '-p', url.port || '5432'];
      await run('pgbench', [...args, '-U', decodeURIComponent(url.username), url.pathname.slice(1)]);
      const { store } = await openStore({ databaseUrl: s.databaseUrl, databasePoolSize: 1 });
      try {
        const { plants, found, changes } = await holds(store);
        assert.equal(plants, 1000);
        const first = found[0]!;
        const ids = Array.from({ length: 1000 }, (_, i) => first + BigInt(i));
        assert.deepEqual(found, ids);
        assert.deepEqual(changes, ids);
        assert.deepEqual(await store.plants.get(first), { id: first, name: 'Monstera', tag: 'tropical' });
      } finally {
        await store.close();
      }
    });
  });
});
