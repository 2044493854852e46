import { INT64_MAX as MAX_ID, INT64_MIN as MIN_ID } from '../../domain/int64.js';
import type { QueryConfig } from 'pg';
import type { PlantRecord } from '../../domain/plant.js';
import type { PlantListQuery } from '../../domain/plant-query.js';
import { plantFromRow, type PlantRow, type Run } from './rows.js';

/** How many entries of each searched word are counted, at most, to choose the one that leads. */
const LEAD_PROBE = 1000;

/**
 * Statements of the filtered list (the index, the words table: migrations.ts), one per page
 * length. Each walk is written `(key, id) >= (value, cursor) AND key <= value ORDER BY key, id`,
 * which only the (key, id) index can answer in order: written `key = value ORDER BY id`, the
 * planner may instead walk the primary key in id order and filter, reading the whole store for a
 * rare tag, because a tag or a word it cannot see (a parameter, a word not in its statistics) is
 * estimated as common as any other (EXPLAIN on 1M plants: 210,000 rows read for 21). Every page
 * is planned for its own values: the store keeps no prepared statement, and so no generic plan,
 * in a server session (pool.ts). The page's length is written into the statement, and a search
 * with tags is a statement of its own, from when generic plans were kept: they took `LIMIT $n`
 * for a tenth of the rows, and a tag filter that may be empty for one that keeps few plants.
 * Exported for the tests that read their plans.
 */
export const SQL = {
  // One walk of plants_tag per tag, from the cursor, cut at the page's length: the outer sort
  // sees at most that many rows per tag, never every plant of a tag.
  byTags: (limit: number) => ({
    text: `SELECT p.id, p.name, p.tag FROM unnest($1::text[]) AS t (tag)
           CROSS JOIN LATERAL (SELECT id, name, tag FROM plants
                               WHERE (plants.tag, id) >= (t.tag, $2) AND plants.tag <= t.tag
                               ORDER BY plants.tag, id LIMIT ${limit}) AS p
           ORDER BY p.id LIMIT ${limit}`,
  }),
  // The search's words ($1) are looked up as they are, as the names' words were written (the
  // search's one rule, searchWords). One word leads: its (word, id) entries are walked in id order
  // from the cursor, and each is kept when every other word has an entry for the same id. Of
  // several words, the rarest past the cursor leads: each one's entries from the cursor are
  // counted, walking the index as the page does, up to LEAD_PROBE (a tie, such as words that all
  // reach it, goes to the longest). So a word on few plants or on none, beside one on every plant,
  // costs at most that count, not a walk of the common word's plants. A page costs the walk of the
  // lead word up to the page's last match. With tags, the tag is checked on each plant the walk
  // finds: such a page may read every match of the lead word past the cursor when few of them carry
  // the tags. The other words (not the lead: the walk found it) are probed in the index for each
  // entry walked; OFFSET 0 keeps that probe a subquery the planner cannot turn into a hash of every
  // word stored, which it chose on some stores (twenty times a page's time, on every page, since
  // the hash is built before the walk reads a single entry).
  // One word is its own lead: its entries are walked from the cursor, with nothing to choose or
  // probe. The same page as bySearch's for it, in a statement PostgreSQL plans in a fifth of the
  // time: every page is planned (docs/performance.md, No session state).
  byWord: (limit: number, tagged: boolean) => ({
    text: `SELECT p.id, p.name, p.tag
           FROM plant_words lead JOIN plants p ON p.id = lead.id
           WHERE (lead.word, lead.id) >= ($1::text, $2::bigint) AND lead.word <= $1::text
             ${tagged ? 'AND p.tag = ANY ($3::text[])' : ''}
           ORDER BY lead.word, lead.id LIMIT ${limit}`,
  }),
  bySearch: (limit: number, tagged: boolean) => ({
    text: `WITH words AS MATERIALIZED (SELECT $1::text[] AS all_words),
                lead_word AS MATERIALIZED (
                  SELECT w FROM words, unnest(all_words) AS w
                  ORDER BY CASE WHEN cardinality(all_words) > 1 THEN
                             (SELECT count(*) FROM (SELECT FROM plant_words c
                                                    WHERE (c.word, c.id) >= (w, $2) AND c.word <= w
                                                    ORDER BY c.word, c.id LIMIT ${LEAD_PROBE}) AS entries)
                           END,
                           length(w) DESC, w
                  LIMIT 1)
           SELECT p.id, p.name, p.tag
           FROM plant_words lead JOIN plants p ON p.id = lead.id
           WHERE (lead.word, lead.id) >= ((SELECT w FROM lead_word), $2) AND lead.word <= (SELECT w FROM lead_word)
             AND NOT EXISTS (SELECT FROM words, unnest(all_words) AS w
                             WHERE w <> (SELECT w FROM lead_word)
                               AND NOT EXISTS (SELECT FROM plant_words o WHERE o.word = w AND o.id = lead.id OFFSET 0))
             ${tagged ? 'AND p.tag = ANY ($3::text[])' : ''}
           ORDER BY lead.word, lead.id LIMIT ${limit}`,
  }),
};

/**
 * The statement of a page that passes the query's filters: undefined when it has none (the plain
 * list), null when no plant can pass. Exported for the tests that read its plan.
 */
export function filteredQuery({ after, tags, search }: PlantListQuery, limit: number): QueryConfig | null | undefined {
  const tagList = [...new Set(tags ?? [])];
  if (tagList.length === 0 && search === undefined) return undefined;
  if (after !== undefined && after >= MAX_ID) return null;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`a page of ${limit} plants`);
  const from = String(after === undefined ? MIN_ID : after + 1n);
  if (search === undefined) return { ...SQL.byTags(limit), values: [tagList, from] };
  const words = [...new Set(search)];
  if (words.length === 0) return null;
  const tagged = tagList.length > 0;
  const [statement, lookedUp] = words.length === 1 ? [SQL.byWord, words[0]] : [SQL.bySearch, words];
  return { ...statement(limit, tagged), values: tagged ? [lookedUp, from, tagList] : [lookedUp, from] };
}

/** A page that passes the query's filters; undefined when it has none (the plain list). */
export async function listFiltered(
  run: Run,
  filter: PlantListQuery,
  limit: number,
): Promise<PlantRecord[] | undefined> {
  const query = filteredQuery(filter, limit);
  if (query === undefined) return undefined;
  if (query === null) return [];
  return (await run<PlantRow>(query)).map(plantFromRow);
}
