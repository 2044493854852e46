import type { QueryConfig } from 'pg';
import type { PlantRecord } from '../../domain/plant.js';
import { searchWords } from '../../domain/search-words.js';

// plant_words holds a row (word, id) for each word of each plant's name, as the search's one rule
// gives them (searchWords): the application writes them, with the statements that write the
// plants, and a search looks its own words up as they are.

/** Entries of plant_words as two columns, for `unnest($n::text[], $m::bigint[])`. */
export interface WordColumns {
  words: string[];
  ids: string[];
}

function add(into: WordColumns, id: bigint, words: readonly string[]): void {
  for (const word of words) {
    into.words.push(word);
    into.ids.push(String(id));
  }
}

/** The entries of these plants' names. */
export function entriesOf(plants: readonly PlantRecord[]): WordColumns {
  const out: WordColumns = { words: [], ids: [] };
  for (const p of plants) add(out, p.id, searchWords(p.name));
  return out;
}

/**
 * What new names change: the entries of the words an old name had and its new one has not (to
 * take out), and of those the new one has and the old one had not (to put in). The words both
 * share keep their entries, untouched.
 */
export function entriesChanged(updates: readonly { plant: PlantRecord; before: PlantRecord }[]): {
  gone: WordColumns;
  added: WordColumns;
} {
  const gone: WordColumns = { words: [], ids: [] };
  const added: WordColumns = { words: [], ids: [] };
  for (const { plant, before } of updates) {
    if (plant.name === before.name) continue;
    const was = searchWords(before.name);
    const now = searchWords(plant.name);
    const out = was.filter((w) => !now.includes(w));
    const into = now.filter((w) => !was.includes(w));
    add(gone, plant.id, out);
    add(added, plant.id, into);
  }
  return { gone, added };
}

/** Statements that write entries; each takes the two columns as $1 and $2. */
export const WORDS_SQL = {
  add: `INSERT INTO plant_words (word, id) SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT DO NOTHING`,
  remove: `DELETE FROM plant_words pw USING unnest($1::text[], $2::bigint[]) AS e (word, id)
           WHERE pw.word = e.word AND pw.id = e.id`,
} as const;

/** How many plants the migration reads, and writes the entries of, in one statement each. */
const FILL_PAGE = 10_000;

/**
 * Fills plant_words, empty, with the entries of every plant stored, a page of plants at a time in
 * id order (for the migration that brings the rule to a store that holds plants).
 */
export async function fillPlantWords(query: (q: QueryConfig) => Promise<{ rows: unknown[] }>): Promise<void> {
  for (let after: string | null = null; ;) {
    const { rows } = await query({
      // pg gives a bigint as its decimal string.
      text: `SELECT id, name FROM plants WHERE $1::bigint IS NULL OR id > $1 ORDER BY id LIMIT ${FILL_PAGE}`,
      values: [after],
    });
    const page = rows as { id: string; name: string }[];
    if (page.length === 0) return;
    const entries = entriesOf(page.map((r) => ({ id: BigInt(r.id), name: r.name })));
    await query({ text: WORDS_SQL.add, values: [entries.words, entries.ids] });
    after = page.at(-1)!.id;
  }
}
