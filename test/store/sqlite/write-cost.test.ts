// What a write costs SQLite beyond its rows, seen from outside the code. A replace rewrites only
// the columns that changed: the WAL shows which b-trees' pages a commit wrote, so a rename that
// keeps the tag must leave the tag index alone, and neither a rename nor a delete writes a table
// the search index keeps only for ranking. And a batch of plant writes keeps its
// savepoint journal in memory, where an import's or any other job's spills to a temporary file.
// The search index (FTS5) writes one segment of words per batch, not one per plant.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../../src/store/open-store.js';
import { checkpointFits } from '../../../src/store/sqlite/checkpoint-room.js';
import { SqliteWriter, type JobKind } from '../../../src/store/sqlite/writer.js';
import { WalSync } from '../../../src/store/sqlite/wal-sync.js';
import type { PlantWrite, WriteOutcome } from '../../../src/domain/plant-write.js';
import type { Store } from '../../../src/store/store.js';
import { ftsStructure } from '../../support/fts-structure.js';
import { searchWords } from '../../../src/domain/search-words.js';

/** The b-trees (tables, indexes, plants_fts' shadow tables) whose pages the WAL holds now. */
function btreesInWal(db: Database.Database, path: string): Set<string> {
  const wal = readFileSync(`${path}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const pages = new Set<number>();
  for (let at = 32; at + 24 <= wal.length; at += 24 + pageSize) pages.add(wal.readUInt32BE(at));
  const owner = new Map(
    db
      .prepare<[], { name: string; pageno: number }>('SELECT name, pageno FROM dbstat')
      .all()
      .map((r) => [r.pageno, r.name]),
  );
  return new Set([...pages].map((p) => owner.get(p) ?? `page ${p}`));
}

/**
 * A store in a temporary directory, filled by `fill` before the suite's tests, and a connection of
 * the test's own on its file to look at what the store wrote; both closed after them.
 */
function storeToLookAt(prefix: string, fill: (store: Store) => Promise<unknown>) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const s = { path: join(dir, 'plants.db') } as { path: string; store: Store; look: Database.Database };
  before(async () => {
    s.store = (await openStore({ databaseUrl: `sqlite:${s.path}`, databasePoolSize: 1 })).store;
    await fill(s.store);
    s.look = new Database(s.path);
  });
  after(async () => {
    s.look.close();
    await s.store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return s;
}

describe('what a replace writes [sqlite]', () => {
  const s = storeToLookAt('plant-store-write-cost-', async (store) => {
    for (let i = 1n; i <= 3n; i++)
      await store.plants.write({ kind: 'create', plant: { id: i, name: `plant ${i}`, tag: 'shade' } });
  });

  /** The b-trees whose pages the commit of this one write wrote; it must end as `outcome`. */
  async function pagesOf(write: PlantWrite, outcome: WriteOutcome['kind']): Promise<Set<string>> {
    s.look.pragma('wal_checkpoint(TRUNCATE)');
    assert.equal((await s.store.plants.write(write)).kind, outcome);
    return btreesInWal(s.look, s.path);
  }
  const written = (id: bigint, name: string, tag: string) =>
    pagesOf({ kind: 'replace', plant: { id, name, tag } }, 'updated');

  it('a rename that keeps the tag leaves the tag index alone, no write the ranking table; each is found as it now is', async () => {
    const both = await written(1n, 'renamed one', 'sun');
    assert.ok(both.has('plants') && both.has('plants_tag') && both.has('plants_fts_data'), [...both].join(', '));

    const renamed = await written(2n, 'renamed two', 'shade');
    assert.ok(renamed.has('plants') && renamed.has('plants_fts_data'), [...renamed].join(', '));
    assert.ok(!renamed.has('plants_tag'), `a rename wrote the tag index: ${[...renamed].join(', ')}`);

    // (FTS5 itself writes nothing for a name that stays the same.)
    const retagged = await written(3n, 'plant 3', 'sun');
    assert.ok(retagged.has('plants') && retagged.has('plants_tag'), [...retagged].join(', '));

    // FTS5's table of name lengths (for ranking, which a search here never does) is gone: its
    // row per plant was a page at a random place in every rename and delete.
    const deleted = await pagesOf({ kind: 'delete', id: 3n }, 'deleted');
    for (const pages of [both, renamed, deleted]) assert.ok(!pages.has('plants_fts_docsize'), [...pages].join(', '));
    assert.ok(deleted.has('plants') && deleted.has('plants_fts_data'), [...deleted].join(', '));
    await s.store.plants.write({ kind: 'create', plant: { id: 3n, name: 'plant 3', tag: 'sun' } });

    // And each is found as it now is, by its words and by its tag.
    const ids = async (query: Parameters<Store['plants']['list']>[0]) =>
      (await s.store.plants.list(query, 10)).map((p) => p.id);
    assert.deepEqual(await ids({ search: searchWords('renamed') }), [1n, 2n]);
    assert.deepEqual(await ids({ search: searchWords('plant') }), [3n]);
    assert.deepEqual(await ids({ tags: ['sun'] }), [1n, 3n]);
    assert.deepEqual(await ids({ tags: ['shade'] }), [2n]);
  });
});

describe('what a batch writes to the search index [sqlite]', () => {
  const s = storeToLookAt('plant-store-fts-cost-', (store) =>
    store.plants.write({ kind: 'create', plant: { id: 1000n, name: 'first fern' } }),
  );

  const ids = Array.from({ length: 20 }, (_, i) => BigInt(i + 1));
  // Writes arrive in any order; FTS5 gathers words in memory only while rowids ascend.
  const arriving = [...ids].reverse();
  const found = async (search: string) =>
    (await s.store.plants.list({ search: searchWords(search) }, 100)).map((p) => p.id);

  /** The leaves FTS5 wrote for these writes, sent in one turn of the event loop: one batch. */
  async function leaves(writes: Parameters<Store['plants']['write']>[0][]): Promise<number> {
    const before = ftsStructure(s.look).leavesWritten;
    await Promise.all(writes.map((w) => s.store.plants.write(w)));
    return ftsStructure(s.look).leavesWritten - before;
  }

  it('one segment for a batch of creations, of renames, of deletes, in any order; each found as it now is', async () => {
    const created = await leaves(
      arriving.map((id) => ({ kind: 'create', plant: { id, name: `fern ${id}`, tag: 'a' } })),
    );
    assert.ok(created <= 2, `20 creations in one batch wrote ${created} leaves of the search index`);
    assert.deepEqual(await found('fern'), [...ids, 1000n]);

    const renamed = await leaves(
      arriving.map((id) => ({ kind: 'replace', plant: { id, name: `palm ${id}`, tag: 'a' } })),
    );
    assert.ok(renamed <= 2, `20 renames in one batch wrote ${renamed} leaves of the search index`);
    assert.deepEqual(await found('fern'), [1000n]);
    assert.deepEqual(await found('palm'), ids);

    const deleted = await leaves(arriving.map((id) => ({ kind: 'delete', id })));
    assert.ok(deleted <= 2, `20 deletes in one batch wrote ${deleted} leaves of the search index`);
    assert.deepEqual(await found('palm'), []);
    assert.deepEqual(await found('first'), [1000n]);
  });
});

/** A temporary file SQLite opened and unlinked: a spilled savepoint journal, while it is open. */
function openTemporaryFiles(): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.endsWith(' (deleted)') && !target.includes('plants.db'));
}

describe('where a batch keeps its savepoint journal [sqlite]', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-journal-'));
  const path = join(dir, 'plants.db');
  let db: Database.Database;
  let sync: WalSync;
  let writer: SqliteWriter;
  before(() => {
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    // Rows over about 200 pages: rewriting them all spills any journal kept in a file (past 64 KiB).
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(i, 'x'.repeat(300));
    })();
    sync = new WalSync(`${path}-wal`);
    writer = new SqliteWriter(db, sync, () => checkpointFits(db, path));
  });
  after(async () => {
    await writer.close();
    sync.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Jobs that rewrite every row, inside their savepoint, and say what temporary files are open then. */
  const rewrite = (small: boolean): JobKind<number, string[]> => ({
    many(items) {
      db.prepare("UPDATE t SET v = v || 'y'").run();
      return items.map(() => openTemporaryFiles());
    },
    ...(small ? { small: true as const } : {}),
  });

  it('in memory for a batch of small jobs, in a temporary file for others and for a very large batch', async () => {
    const [small] = await Promise.all([writer.add(rewrite(true), 1)]);
    assert.deepEqual(small, [], 'a batch of small jobs spilled its journal to a file');

    const other = await writer.add(rewrite(false), 1);
    assert.equal(other.length, 1, `a job of another kind kept its journal in memory: ${other.join(', ')}`);

    const large = await Promise.all(Array.from({ length: 513 }, (_, i) => writer.add(rewrite(true), i)));
    assert.equal(large[0]!.length, 1, 'a batch of 513 small jobs kept its journal in memory');

    const [again] = await Promise.all([writer.add(rewrite(true), 1)]);
    assert.deepEqual(again, [], 'the journal went back to memory for a small batch');
  });
});
