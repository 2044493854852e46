// What a search page reads on PostgreSQL, from the plan of the store's own statement: a search
// for a word on every plant beside a word on few plants or none walks about the rare word's
// entries, not every plant's. Counted: the entries of plant_words that the walks read (the
// page's walk, "lead", and the counts that choose its word, "c"), kept or filtered out. And
// the probes of the other words ("o") read the index for each entry walked: the planner once
// chose, on a store of this size, to read and hash every word stored for them instead, on
// every page. The plan is the one the store gets: its statement with the page's values written
// in (the store prepares no statement: src/store/postgres/pool.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { searchWords } from '../../src/domain/search-words.js';
import { openStore } from '../../src/store/open-store.js';
import { inline } from '../../src/store/postgres/inline.js';
import { filteredQuery } from '../../src/store/postgres/plant-filters.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore, postgresSql, suiteOptions, type TestStore } from '../support/stores.js';

/** Plants in the store, every one named "Philodendron <n>". */
const PLANTS = 20_000;

interface PlanNode {
  'Relation Name'?: string;
  Alias?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Entries of plant_words that the plan reads under these aliases, over all their loops. */
function walked(node: PlanNode, aliases = new Set(['lead', 'c'])): number {
  const read =
    node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
  const own =
    node['Relation Name'] === 'plant_words' && aliases.has(node.Alias ?? '') ? read * node['Actual Loops'] : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + walked(child, aliases), 0);
}

describe('the cost of a search page [postgres]', suiteOptions('postgres'), () => {
  let db: TestStore;
  let store: Store;
  let client: pg.Client;
  let schema: string;

  /** The plan of the store's search statement for one page of 20, run. */
  async function searchPlan(search: string): Promise<PlanNode> {
    const page = inline(filteredQuery({ search: searchWords(search) }, 21)!);
    const answers = (await client.query(
      `SET LOCAL search_path = ${schema}; EXPLAIN (ANALYZE, FORMAT JSON) ${page}`,
    )) as unknown as pg.QueryResult[];
    return (answers[1]!.rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan;
  }

  /** The entries of plant_words that the store's search statement walks for one page of 20. */
  const wordsWalked = async (search: string) => walked(await searchPlan(search));

  before(async () => {
    db = createTestStore('postgres');
    store = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 })).store;
    schema = new URL(db.databaseUrl).searchParams.get('schema')!;
    // Through the write path, which writes the words of each name.
    for (let from = 1; from <= PLANTS; from += 2_000) {
      const plants = Array.from({ length: 2_000 }, (_, k) => ({
        id: BigInt(from + k),
        name: `Philodendron ${from + k}`,
      }));
      await store.plants.writeAll(plants.map((plant) => ({ kind: 'create', plant })));
    }
    await postgresSql(`ANALYZE ${schema}.plants, ${schema}.plant_words`);
    client = new pg.Client({ connectionString: db.databaseUrl.replace(/\?.*$/, '') });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await store?.close();
    await db?.drop();
  });

  it('finds what the rare word and the common one share', async () => {
    const found = async (search: string) =>
      (await store.plants.list({ search: searchWords(search) }, 20)).map((p) => p.name);
    assert.deepEqual(await found('philodendron 7'), ['Philodendron 7']);
    assert.deepEqual(await found('7 PHILODENDRON'), ['Philodendron 7']);
    assert.deepEqual(await found('philodendron nowhere'), []);
    assert.equal((await found('philodendron')).length, 20);
  });

  it('walks about the rare word, not every plant of the common one', async () => {
    for (const search of ['philodendron 7', 'philodendron nowhere', 'nowhere philodendron', 'philodendron 19999']) {
      const read = await wordsWalked(search);
      // Choosing the lead counts at most 1,000 entries of each word; the walk then reads the
      // rare word's few.
      assert.ok(read <= 1_100, `${search}: ${read} entries of plant_words walked for a page`);
    }
    assert.ok((await wordsWalked('philodendron')) <= 1_100, 'one common word: about a page');
  });

  it('probes the other words for the entries walked, not every word stored', async () => {
    for (const search of ['philodendron 7', 'philodendron nowhere']) {
      // A page of 21 entries walked, each probed for the other word.
      const probed = walked(await searchPlan(search), new Set(['o']));
      assert.ok(probed <= 100, `${search}: ${probed} entries of plant_words read to probe the words`);
    }
    // One word: its walk found each entry, and nothing is probed.
    const probed = walked(await searchPlan('philodendron'), new Set(['o']));
    assert.equal(probed, 0, `philodendron: ${probed} entries read to probe the word walked`);
  });
});
