import type Database from 'better-sqlite3';
import { inIdOrder, type PlantRecord } from '../../domain/plant.js';
import type { NewEvent } from '../../domain/webhook.js';
import type { PlantTx } from '../write-path.js';
import { plantFromRow, type PlantRow } from './rows.js';
import { CURRENT_POSITION } from './changes.js';
import { manyRows, valuesOf } from './many-rows.js';
import { indexedWords } from './search-index.js';

/** Creations from this many on go in by multi-row statements (a batch's); fewer, a row a statement. */
const MANY = 16;
/** Rows of one multi-row statement: 3 values a plant, well within SQLite's 32,766 variables. */
const ROWS = 100;

/**
 * The write path's view of the SQLite store, on the write connection inside the writer's
 * transaction. The writer is the only one writing, so a read needs no lock to stay true.
 *
 * Each statement that changes a name also tells plants_fts (a contentless FTS5 index of the
 * names' words, search-index.ts) the words that come and go, here rather than in triggers: FTS5
 * then writes one segment of new words per transaction, where a trigger made it write one per
 * plant (migrations.ts, version 5). A restore passes `searchIndex: false` and fills the index once
 * its plants are in.
 *
 * Each step writes its plants in id order. FTS5 gathers a transaction's words in memory only
 * while their rowids ascend: a rowid below the last one written makes it write what it holds as
 * a new segment of the index first, and merge segments (sqlite3Fts5IndexBeginWrite). Renames of
 * plants in their order of arrival wrote about half a segment per rename; in id order a step of
 * the write path writes none, and the commit one. Within a step the ids are distinct, so the order
 * changes nothing else.
 */
export function sqlitePlantTx(
  db: Database.Database,
  log: (events: NewEvent[], after: { position: bigint; subscribers: boolean }) => bigint[],
  { searchIndex = true } = {},
): PlantTx {
  const s = {
    get: db.prepare<[bigint], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?'),
    // The log's position, and whether any endpoint is enabled (then changes have deliveries).
    position: db.prepare<[], { position: bigint; subscribers: bigint }>(
      `SELECT (${CURRENT_POSITION}) AS position, EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled = 1) AS subscribers`,
    ),
    insert: db.prepare<[bigint, string, string | null]>(
      'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
    ),
    // SQLite rewrites the entries of every index on a column that is SET, whether or not its
    // value changed: a rename that keeps the tag leaves the tag index alone, and writes fewer
    // pages to the WAL (docs/performance.md).
    update: db.prepare<[string, string | null, bigint]>('UPDATE plants SET name = ?, tag = ? WHERE id = ?'),
    rename: db.prepare<[string, bigint]>('UPDATE plants SET name = ? WHERE id = ?'),
    delete: db.prepare<[bigint], { name: string }>('DELETE FROM plants WHERE id = ? RETURNING name'),
    // The 'delete' command takes out the words it is given: those the indexed name gave.
    ftsInsert: db.prepare<[bigint, string]>('INSERT INTO plants_fts (rowid, words) VALUES (?, ?)'),
    ftsDelete: db.prepare<[bigint, string]>(
      `INSERT INTO plants_fts (plants_fts, rowid, words) VALUES ('delete', ?, ?)`,
    ),
  };
  const indexed = (id: bigint, words: string): void => {
    if (searchIndex) s.ftsInsert.run(id, words);
  };
  const unindexed = (id: bigint, words: string): void => {
    if (searchIndex) s.ftsDelete.run(id, words);
  };
  const many = {
    taken: manyRows(db, ROWS, (n) => `SELECT id FROM plants WHERE id IN (${Array<string>(n).fill('?').join(', ')})`),
    insert: manyRows(db, ROWS, (n) => `INSERT INTO plants (id, name, tag) VALUES ${valuesOf(n, 3)}`),
    indexed: manyRows(db, ROWS, (n) => `INSERT INTO plants_fts (rowid, words) VALUES ${valuesOf(n, 2)}`),
  };
  /** What the first read of this transaction found: the log's position and whether anyone subscribes. */
  let logAfter = { position: 0n, subscribers: false };
  const insert = (plants: PlantRecord[]): Set<bigint> => {
    const inserted = new Set<bigint>();
    const ordered = inIdOrder(plants, (p) => p.id);
    if (ordered.length >= MANY) {
      // The writer is the only one writing: an id no row holds now is free until the commit.
      const taken = new Set(many.taken.pluck<PlantRecord, bigint>(ordered, (p) => [p.id]));
      const free = ordered.filter((p) => !taken.has(p.id));
      many.insert.run(free, (p) => [p.id, p.name, p.tag ?? null]);
      if (searchIndex) many.indexed.run(free, (p) => [p.id, indexedWords(p.name)]);
      for (const p of free) inserted.add(p.id);
      return inserted;
    }
    for (const p of ordered) {
      if (s.insert.run(p.id, p.name, p.tag ?? null).changes === 0) continue;
      inserted.add(p.id);
      indexed(p.id, indexedWords(p.name));
    }
    return inserted;
  };
  return {
    async read(ids, creations) {
      // Insert first: an id a creation took was free, so there was no plant to read under it, and
      // a POST of a new id costs one statement fewer. The rest read as before: nothing else has
      // changed them.
      const inserted = insert(creations);
      const plants = new Map<bigint, PlantRecord>();
      for (const id of ids) {
        if (inserted.has(id)) continue;
        const row = s.get.get(id);
        if (row) plants.set(id, plantFromRow(row));
      }
      const now = s.position.get()!;
      // Nothing else writes while the writer's transaction is open: still so when it logs.
      logAfter = { position: now.position, subscribers: now.subscribers === 1n };
      return { plants, inserted, position: now.position };
    },
    insert: async (plants) => insert(plants),
    async update(updates) {
      for (const { plant: p, before } of inIdOrder(updates, (u) => u.plant.id)) {
        if (p.tag === before.tag) s.rename.run(p.name, p.id);
        else s.update.run(p.name, p.tag ?? null, p.id);
        if (p.name === before.name) continue;
        // A new name with the same words ("Monstera" for "monstera") leaves the index as it is.
        const was = indexedWords(before.name);
        const now = indexedWords(p.name);
        if (was === now) continue;
        unindexed(before.id, was);
        indexed(p.id, now);
      }
    },
    async delete(plants) {
      // The name deleted, as the store holds it, says which words go.
      for (const { id } of inIdOrder(plants, (p) => p.id)) {
        const gone = s.delete.get(id);
        if (gone) unindexed(id, indexedWords(gone.name));
      }
    },
    log: async (events) => log(events, logAfter),
  };
}
