import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';

describe('SQLite group commit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-group-commit-'));
  const path = join(dir, 'store.db');
  let store: SqliteStore;

  before(async () => {
    store = new SqliteStore(path);
    await store.migrate();
    // Two ways a batch can fail, planted from outside: a statement that aborts ('abort'), and a
    // deferred foreign key that only fails at COMMIT ('commit-fails').
    const db = new Database(path);
    db.exec(`
      CREATE TABLE parent (id INTEGER PRIMARY KEY);
      CREATE TABLE child (pid INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
      CREATE TRIGGER abort_insert BEFORE INSERT ON plants WHEN NEW.name = 'abort'
        BEGIN SELECT RAISE(ABORT, 'planted failure'); END;
      CREATE TRIGGER fail_commit AFTER INSERT ON plants WHEN NEW.name = 'commit-fails'
        BEGIN INSERT INTO child VALUES (42); END;`);
    db.close();
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits concurrent writes together: the first alone, everything that queued behind it in one batch', async () => {
    const before = store.commits;
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => store.createPlant({ id: BigInt(i), name: `p${i}` })),
    );
    assert.ok(outcomes.every((o) => o.kind === 'created'));
    assert.equal(store.commits - before, 2);
    assert.equal((await store.listPlants(undefined, 1000)).length, 200);
    assert.equal(await store.countPlants(), 200);
  });

  it('reports its backlog and figures: writes waiting for a commit, commits, writes committed', async () => {
    const before = store.writeStats();
    const writes = Array.from({ length: 5 }, (_, i) => store.createPlant({ id: BigInt(5000 + i), name: 'w' }));
    assert.equal(store.pendingWrites(), 5, 'one in flight and four queued behind it');
    await Promise.all(writes);
    assert.equal(store.pendingWrites(), 0);
    const now = store.writeStats();
    assert.equal(now.commits - before.commits, 2);
    assert.equal(now.writes - before.writes, 5);
    await Promise.all(Array.from({ length: 5 }, (_, i) => store.deletePlant(BigInt(5000 + i))));
  });

  it('keeps per-write outcomes inside a batch: a duplicate of an id created earlier in the batch is seen', async () => {
    const [first, same, other] = await Promise.all([
      store.createPlant({ id: 1000n, name: 'a' }),
      store.createPlant({ id: 1000n, name: 'a' }),
      store.createPlant({ id: 1000n, name: 'b' }),
    ]);
    assert.deepEqual([first.kind, same.kind, other.kind], ['created', 'identical', 'conflict']);
  });

  for (const failing of ['abort', 'commit-fails']) {
    it(`rejects every write of a batch whose ${failing === 'abort' ? 'statement' : 'commit'} fails, and applies none`, async () => {
      const lone = store.createPlant({ id: 2000n, name: 'lone' });
      const batch = [2001n, 2002n, 2003n].map((id) => store.createPlant({ id, name: `b${id}` }));
      batch.push(store.createPlant({ id: 2004n, name: failing }));
      batch.push(store.createPlant({ id: 2005n, name: 'after' }));
      const settled = await Promise.allSettled([lone, ...batch]);
      assert.equal(settled[0]!.status, 'fulfilled', 'the earlier batch committed');
      for (const s of settled.slice(1)) assert.equal(s.status, 'rejected');
      for (const id of [2001n, 2002n, 2003n, 2004n, 2005n]) assert.equal(await store.getPlant(id), undefined);
      assert.deepEqual(await store.getPlant(2000n), { id: 2000n, name: 'lone' });
      await store.deletePlant(2000n);
      // The writer recovers: the next batch commits.
      assert.equal((await store.createPlant({ id: 2001n, name: 'ok' })).kind, 'created');
      await store.deletePlant(2001n);
    });
  }

  it('lets queued writes commit before close returns', async () => {
    const other = new SqliteStore(path);
    await other.migrate();
    const pending = Array.from({ length: 20 }, (_, i) => other.createPlant({ id: BigInt(5000 + i), name: 'q' }));
    await other.close();
    assert.ok((await Promise.all(pending)).every((o) => o.kind === 'created'));
    assert.equal((await store.listPlants(4999n, 100)).length, 20);
  });
});
