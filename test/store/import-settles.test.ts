// A bulk load leaves what the list's filters read laid out for reading. On SQLite, each batch of
// an import writes a segment of the search index, and a restore's rebuild several; a search
// seeks its words in every segment, so both end by merging the index into one. On PostgreSQL an
// import ends by refreshing the planner's statistics of the tables it filled.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { loadDocument } from '../../src/openapi/document.js';
import { importPlants } from '../../src/use-cases/export-import.js';
import { ftsStructure } from '../support/fts-structure.js';
import { suiteStore } from '../support/suite-store.js';
import { postgresSql, stores, suiteOptions } from '../support/stores.js';
import { searchWords } from '../../src/domain/search-words.js';

/** NDJSON lines of `count` plants from id `from`: five of the import's batches of 1,000 for 4,500. */
const lines = (count: number, from = 1) =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ id: from + i, name: `fern ${from + i}`, tag: 'shade' }));

/** The segments of a SQLite store's search index, read on a connection of the test's own. */
function segments(databaseUrl: string): number {
  const look = new Database(new URL(databaseUrl).pathname, { readonly: true });
  try {
    return ftsStructure(look).segments;
  } finally {
    look.close();
  }
}

for (const kind of stores) {
  describe(`an import settles the store [${kind}]`, suiteOptions(kind), () => {
    const s = suiteStore(kind);

    /** How many times plant_words was analyzed other than by autovacuum. */
    const analyzed = async () => {
      const schema = new URL(s.db.databaseUrl).searchParams.get('schema');
      const { rows } = await postgresSql(
        `SELECT analyze_count FROM pg_stat_user_tables WHERE schemaname = '${schema}' AND relname = 'plant_words'`,
      );
      return Number((rows[0] as { analyze_count: string }).analyze_count);
    };

    it('after its batches, and every plant is found by its words', async () => {
      const analyzedBefore = kind === 'postgres' ? await analyzed() : 0;
      const report = await importPlants(s.store, loadDocument(), lines(4_500));
      assert.equal(report.created, 4_500);
      if (kind === 'sqlite')
        assert.equal(segments(s.db.databaseUrl), 1, 'segments of the search index after an import');
      else assert.ok((await analyzed()) > analyzedBefore, 'plant_words was not analyzed after the import');
      const found = await s.store.plants.list({ search: searchWords('fern 4321') }, 10);
      assert.deepEqual(
        found.map((p) => p.id),
        [4321n],
      );
      assert.equal((await s.store.plants.list({ search: searchWords('fern'), after: 4_490n }, 100)).length, 10);
    });

    it('not when it created nothing: a second import of the same lines skips them all', async () => {
      const analyzedBefore = kind === 'postgres' ? await analyzed() : 0;
      const report = await importPlants(s.store, loadDocument(), lines(10));
      assert.equal(report.skipped, 10);
      if (kind === 'postgres') assert.equal(await analyzed(), analyzedBefore);
    });
  });
}

describe('the merge after an import, on a larger index [sqlite]', suiteOptions('sqlite'), () => {
  const s = suiteStore('sqlite');

  it('goes in steps, each committed on its own, so that other writers wait for a step only', async () => {
    for (let at = 1; at <= 100_000; at += 1_000) {
      const batch = Array.from({ length: 1_000 }, (_, i) => ({ id: BigInt(at + i), name: `moss ${at + i}` }));
      await s.store.plants.writeAll(batch.map((plant) => ({ kind: 'create', plant })));
    }
    const commits = s.store.writeStats().commits;
    await s.store.plants.settleAfterImport();
    const steps = s.store.writeStats().commits - commits;
    assert.equal(segments(s.db.databaseUrl), 1, 'segments of the search index after the merge');
    // About 400 pages of index, merged some 200 at a time; the last step finds nothing to do.
    assert.ok(steps >= 3, `the merge took ${steps} commit(s)`);
  });
});

describe('a restore merges the search index it rebuilt [sqlite]', suiteOptions('sqlite'), () => {
  const s = suiteStore('sqlite');

  it('into one segment, whose words find every plant', async () => {
    // FTS5's rebuild writes a segment for every few tens of thousands of names.
    const plants = Array.from({ length: 60_000 }, (_, i) => ({ id: BigInt(i + 1), name: `palm ${i + 1}` }));
    await s.store.restoreInto(async (target) => {
      for (let at = 0; at < plants.length; at += 10_000)
        await target.records.plants.insert(plants.slice(at, at + 10_000));
    });
    assert.equal(segments(s.db.databaseUrl), 1, 'segments of the search index after a restore');
    assert.deepEqual(
      (await s.store.plants.list({ search: searchWords('palm 54321') }, 10)).map((p) => p.id),
      [54321n],
    );
  });
});
