// The list's filters on both stores, without HTTP: any of several tags, exactly; words of the
// name, whole, all of them, whatever their case and Latin accents; both together; pages that
// follow each other through a filter; search texts that look like the search engine's syntax.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PlantRecord } from '../../src/domain/plant.js';
import type { PlantListQuery } from '../../src/domain/plant-query.js';
import { searchWords } from '../../src/domain/search-words.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

const MAX = 2n ** 63n - 1n;
const MIN = -(2n ** 63n);

/** Ids near both ends of int64 and around zero, so that cursors cross the sign and the extremes. */
const PLANTS: PlantRecord[] = [
  { id: MIN, name: 'Monstera deliciosa', tag: 'tropical' },
  { id: MIN + 1n, name: 'Café au lait dahlia', tag: 'Tropical' },
  { id: -5n, name: 'CAFE bush', tag: '' },
  { id: -1n, name: 'Monstera adansonii', tag: 'tropical' },
  { id: 0n, name: 'Swiss cheese plant' },
  { id: 1n, name: 'Lemon tree', tag: 'citrus' },
  { id: 2n, name: 'Monsteras', tag: 'tropical' },
  { id: 7n, name: 'Naïve monstera, the café kind', tag: 'citrus' },
  { id: MAX - 1n, name: 'Monstera obliqua', tag: '' },
  { id: MAX, name: 'Ghost monstera', tag: 'tropical' },
];

const ids = (plants: PlantRecord[]) => plants.map((p) => p.id);

for (const kind of stores) {
  describe(`the list's filters [${kind}]`, suiteOptions(kind), () => {
    let db: TestStore;
    let store: Store;
    const list = (query: PlantListQuery, limit = 100) => store.plants.list(query, limit).then(ids);
    /** Every page of `size` through the filter, each from the last id of the one before. */
    async function pages(query: PlantListQuery, size: number): Promise<bigint[]> {
      const seen: bigint[] = [];
      for (let cursor: bigint | undefined, n = 0; n < 20; n++) {
        const page = await list({ ...query, after: cursor }, size);
        seen.push(...page);
        if (page.length < size) return seen;
        cursor = page.at(-1);
      }
      throw new Error('pages never ended');
    }

    before(async () => {
      db = createTestStore(kind);
      store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 2 })).store;
      await store.plants.writeAll(PLANTS.map((plant) => ({ kind: 'create', plant })));
    });
    after(async () => {
      await store.close();
      await db.drop();
    });

    it('keeps plants whose tag is exactly one of the tags, by id', async () => {
      assert.deepEqual(await list({ tags: ['tropical'] }), [MIN, -1n, 2n, MAX]);
      assert.deepEqual(await list({ tags: ['Tropical'] }), [MIN + 1n]);
      assert.deepEqual(await list({ tags: ['citrus', 'Tropical', 'citrus'] }), [MIN + 1n, 1n, 7n]);
      assert.deepEqual(await list({ tags: [''] }), [-5n, MAX - 1n]);
      assert.deepEqual(await list({ tags: ['tropica', 'TROPICAL', 'none'] }), []);
      assert.deepEqual(await list({ tags: ['tropical'], after: -1n }, 1), [2n]);
      assert.deepEqual(await list({ tags: ['tropical', ''], after: MAX - 1n }), [MAX]);
      assert.deepEqual(await list({ tags: ['tropical'], after: MAX }), []);
    });

    it('pages through a filter without a duplicate or a miss, across the sign and the ends of int64', async () => {
      for (const size of [1, 2, 3]) {
        assert.deepEqual(await pages({ tags: ['tropical', ''] }, size), [MIN, -5n, -1n, 2n, MAX - 1n, MAX]);
        assert.deepEqual(await pages({ search: searchWords('monstera') }, size), [MIN, -1n, 7n, MAX - 1n, MAX]);
        assert.deepEqual(await pages({ search: searchWords('monstera'), tags: ['tropical'] }, size), [MIN, -1n, MAX]);
      }
      assert.deepEqual(await list({ search: searchWords('monstera'), after: MIN }), [-1n, 7n, MAX - 1n, MAX]);
      assert.deepEqual(await list({ search: searchWords('monstera'), after: MAX - 1n }), [MAX]);
      assert.deepEqual(await list({ search: searchWords('monstera'), after: MAX }), []);
    });

    it('finds whole words of the name, all of them, whatever their case and Latin accents', async () => {
      assert.deepEqual(await list({ search: searchWords('monstera') }), [MIN, -1n, 7n, MAX - 1n, MAX]);
      assert.deepEqual(await list({ search: searchWords('MONSTERA') }), [MIN, -1n, 7n, MAX - 1n, MAX]);
      assert.deepEqual(await list({ search: searchWords('cafe') }), [MIN + 1n, -5n, 7n]);
      assert.deepEqual(await list({ search: searchWords('CAFÉ') }), [MIN + 1n, -5n, 7n]);
      assert.deepEqual(await list({ search: searchWords('naive') }), [7n]);
      assert.deepEqual(await list({ search: searchWords('mon') }), []);
      assert.deepEqual(await list({ search: searchWords('monsteras') }), [2n]);
      assert.deepEqual(await list({ search: searchWords('  Monstera \t DELICIOSA ') }), [MIN]);
      assert.deepEqual(await list({ search: searchWords('deliciosa monstera') }), [MIN]);
      assert.deepEqual(await list({ search: searchWords('monstera lemon') }), []);
      assert.deepEqual(await list({ search: searchWords('monstera café') }), [7n]);
    });

    it('finds a plant by each word of its name, whatever punctuation joins the words', async () => {
      // Letters and digits make words, anything else separates them: punctuation that a text
      // search would read as a number, a host, a path or an address splits words all the same.
      const names = [
        'Hoya kerrii/variegata',
        'Aloe 2.5',
        'Ficus sp.1',
        'e.g. fern',
        'Pothos -5',
        'Philodendron 10-12cm',
        'ivy.example.com',
        'moss@example.org',
        'https://plants.example/aloe?leaf=green#top',
        'C:\\pots\\fern_1',
        '1,000 leaves',
        "Devil's ivy",
        'x=y+z;w|v~u^t',
        '[a]{b}(c)<d>',
      ];
      const first = 100n;
      await store.plants.writeAll(names.map((name, i) => ({ kind: 'create', plant: { id: first + BigInt(i), name } })));
      try {
        for (const [i, name] of names.entries()) {
          const id = first + BigInt(i);
          assert.ok((await list({ search: searchWords(name) })).includes(id), `${name}: all its words`);
          for (const word of searchWords(name)) {
            assert.ok((await list({ search: [word] })).includes(id), `${name}: the word ${word}`);
          }
        }
        assert.deepEqual(await list({ search: searchWords('kerrii') }), [first]);
        assert.deepEqual(await list({ search: searchWords('12') }), [], 'not a part of the word 12cm');
      } finally {
        await store.plants.writeAll(names.map((_, i) => ({ kind: 'delete', id: first + BigInt(i) })));
      }
    });

    it('combines search and tags: a plant must pass both', async () => {
      assert.deepEqual(await list({ search: searchWords('cafe'), tags: ['citrus', 'Tropical'] }), [MIN + 1n, 7n]);
      assert.deepEqual(await list({ search: searchWords('cafe'), tags: [''] }), [-5n]);
      assert.deepEqual(await list({ search: searchWords('monstera'), tags: ['citrus'], after: 7n }), []);
    });

    it("never errors on text that looks like the search engine's syntax, and finds nothing in wordless text", async () => {
      for (const search of [
        '"',
        '""',
        '*',
        'mon*',
        'NEAR(monstera cafe)',
        'monstera OR lemon',
        '-monstera',
        'name:cafe',
      ]) {
        await assert.doesNotReject(list({ search: searchWords(search) }), search);
        // Given to the store as a word, as the rule never makes one: never FTS5's syntax either.
        await assert.doesNotReject(list({ search: [search, 'monstera'] }), search);
      }
      assert.deepEqual(await list({ search: searchWords('monstera "') }), [MIN, -1n, 7n, MAX - 1n, MAX]);
      assert.deepEqual(await list({ search: searchWords('mon*') }), []);
      assert.deepEqual(await list({ search: searchWords('monstera OR lemon') }), []);
      assert.deepEqual(await list({ search: searchWords('name:cafe') }), []);
      for (const search of ['-', '* " :', '', '   ', '()'])
        assert.deepEqual(await list({ search: searchWords(search) }), [], search);
    });
  });
}
