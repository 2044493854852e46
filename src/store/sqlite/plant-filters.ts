import type Database from 'better-sqlite3';
import { INT64_MAX as MAX_ID, INT64_MIN as MIN_ID } from '../../domain/int64.js';
import type { PlantRecord } from '../../domain/plant.js';
import type { PlantListQuery } from '../../domain/plant-query.js';
import { plantFromRow, type PlantRow } from './rows.js';

/**
 * The FTS5 query for a search's words: each becomes an FTS5 string, its `"` doubled (a word holds
 * none, but no text may reach FTS5's own syntax), and FTS5 keeps the plants that hold them all.
 * Each string is one token as it is: plants_fts splits only at spaces, which no word holds.
 */
function ftsQuery(words: readonly string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '""')}"`).join(' ');
}

const COLUMNS = 'id, name, tag';

/**
 * One tag: an ordered walk of plants_tag from the cursor. Several: one such walk per tag, each
 * cut at the page's length, merged by id; a page costs about the page's length per tag, however
 * common or rare the tags.
 */
function byTagsSql(tags: number): string {
  const walk = `SELECT ${COLUMNS} FROM plants WHERE tag = ? AND id >= ? ORDER BY id LIMIT ?`;
  if (tags === 1) return walk;
  const walks = Array.from({ length: tags }, () => `SELECT * FROM (${walk})`).join(' UNION ALL ');
  return `${walks} ORDER BY id LIMIT ?`;
}

/**
 * FTS5 walks the doclists of the words in rowid (id) order from the cursor, and each match is
 * looked up in plants by id (CROSS JOIN keeps that order of the loops). With tags as well, the
 * tag is checked on each match the search walk finds: such a page may read every match of the
 * search past the cursor when few of them carry the tags.
 */
function bySearchSql(tags: number): string {
  const tagged = tags === 0 ? '' : ` AND p.tag IN (${Array.from({ length: tags }, () => '?').join(', ')})`;
  return `SELECT p.id, p.name, p.tag FROM plants_fts CROSS JOIN plants p ON p.id = plants_fts.rowid
          WHERE plants_fts MATCH ? AND plants_fts.rowid >= ?${tagged} ORDER BY plants_fts.rowid LIMIT ?`;
}

/** The filtered pages of the list, on the read connection; statements are prepared on first use. */
export function sqliteFilters(db: Database.Database) {
  const statements = new Map<string, Database.Statement<unknown[], PlantRow>>();
  const prepared = (sql: string) => {
    let s = statements.get(sql);
    if (!s) statements.set(sql, (s = db.prepare<unknown[], PlantRow>(sql)));
    return s;
  };
  return {
    /** A page that passes the query's filters; undefined when it has none (the plain list). */
    listPlants({ after, tags, search }: PlantListQuery, limit: number): PlantRecord[] | undefined {
      const tagList = [...new Set(tags ?? [])];
      if (tagList.length === 0 && search === undefined) return undefined;
      if (after !== undefined && after >= MAX_ID) return [];
      const from = after === undefined ? MIN_ID : after + 1n;
      if (search === undefined) {
        const args = tagList.flatMap((tag) => [tag, from, limit]);
        return prepared(byTagsSql(tagList.length))
          .all(...args, ...(tagList.length > 1 ? [limit] : []))
          .map(plantFromRow);
      }
      if (search.length === 0) return [];
      return prepared(bySearchSql(tagList.length))
        .all(ftsQuery(search), from, ...tagList, limit)
        .map(plantFromRow);
    },
  };
}
