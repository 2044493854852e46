import { StoreUnavailableError } from '../../domain/errors.js';
import { inIdOrder, type PlantRecord } from '../../domain/plant.js';
import type { PlantTx } from '../write-path.js';
import { entriesChanged, entriesOf, WORDS_SQL } from './plant-words.js';
import { plantFromRow, type PlantRow, type Statements } from './rows.js';
import { CURRENT_POSITION, logChanges } from './changes.js';

/**
 * Statements of the write path. A write batch writes their parameters in (inline.ts); run one by
 * one (a restore's inserts), they bind them. (The bench runs them alone too: statements-alone.ts.)
 */
export const SQL = {
  // In id order whatever the plan (a small table is read in the order of its rows, which updates
  // change): two transactions locking overlapping plants wait for each other, never deadlock.
  lock: {
    text: 'SELECT id::text AS id, name, tag FROM plants WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE',
  },
  // The change log's position, read by a statement of its own after the lock and the insert have
  // waited for whatever held them: a statement reads the snapshot it started with, and a write
  // that changed nothing answers the position of what it waited for (or later).
  position: { text: `${CURRENT_POSITION} AS position` },
  // The plants whose id is free go in, and the words of their names with them (plant-words.ts):
  // the entries ($4, $5) of a plant another writer's insert got first are left out.
  insert: {
    text: `WITH inserted AS (
             INSERT INTO plants (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
             ON CONFLICT (id) DO NOTHING RETURNING id
           ), entries AS (
             INSERT INTO plant_words (word, id)
             SELECT e.word, e.id FROM unnest($4::text[], $5::bigint[]) AS e (word, id)
             WHERE e.id IN (SELECT id FROM inserted)
             ON CONFLICT DO NOTHING
           )
           SELECT id FROM inserted`,
  },
  update: {
    text: `UPDATE plants p SET name = u.name, tag = u.tag
           FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u (id, name, tag) WHERE p.id = u.id`,
  },
  delete: { text: 'DELETE FROM plants WHERE id = ANY($1::bigint[])' },
  // Which of these ids exist as committed when the statement starts (after the lock's wait).
  exists: { text: 'SELECT id::text AS id FROM plants WHERE id = ANY($1::bigint[])' },
} as const;

/** Looks at plants deleted and made again under a write: past this many, the write is busy. */
const MAX_LOOKS = 20;
const BUSY = 'the store is busy with other writes; retry later';

/**
 * In id order, so two instances inserting overlapping ids wait for each other in one order and
 * cannot deadlock.
 */
const byId = (plants: PlantRecord[]) => inIdOrder(plants, (p) => p.id);

const columns = (plants: PlantRecord[]) => [
  plants.map((p) => String(p.id)),
  plants.map((p) => p.name),
  plants.map((p) => p.tag ?? null),
];

/** The insert's values: the plants, then the entries of their words. */
const insertValues = (plants: PlantRecord[]) => {
  const { words, ids } = entriesOf(plants);
  return [...columns(plants), words, ids];
};

/**
 * The write path's view of PostgreSQL, inside one transaction: each step is one statement for
 * every write of the batch. Rows read are locked (FOR UPDATE) until the commit, so a change
 * decided on them cannot be overtaken by another instance; an id that does not exist yet cannot
 * be locked, and an insert that finds it taken is decided again by the write path. The read and
 * the creations' insert go together, in one round trip where `together` can.
 */
export function postgresPlantTx({ together, later, commitWith }: Statements): PlantTx {
  /**
   * Locks again the ids the lock did not find. Under READ COMMITTED a `FOR UPDATE` that waited
   * for another transaction and finds the row it waited for deleted skips it, even when that
   * transaction made the same id again (a batch's delete, then create): the new row is not in the
   * snapshot the statement started with. Each look locks the ids again by a statement of its own,
   * and with it, in the same round trip, reads which of them exist, by a statement that starts
   * after the lock's wait: an id that one does not find was absent from a committed state (the
   * write is refused as for a plant that does not exist); one it finds, the lock skipped, having
   * waited for yet another transaction that made it again: the next look locks it. A round trip
   * only where an id was not found and is not being created (a write of a plant that does not
   * exist; creations learn of a taken id from their insert).
   */
  async function lockRemade(missing: bigint[], plants: Map<bigint, PlantRecord>): Promise<void> {
    for (let look = 0; missing.length > 0; look++) {
      if (look === MAX_LOOKS) throw new StoreUnavailableError(undefined, BUSY);
      const values = [missing.map(String)];
      const [locked = [], present = []] = await together([
        { ...SQL.lock, values },
        { ...SQL.exists, values },
      ]);
      for (const r of locked as PlantRow[]) plants.set(BigInt(r.id), plantFromRow(r));
      const there = new Set(present.map((r) => BigInt(r.id as string)));
      missing = missing.filter((id) => !plants.has(id) && there.has(id));
    }
  }

  return {
    async read(ids, creations) {
      const lock = { ...SQL.lock, values: [ids.map(String)] };
      const insert = { ...SQL.insert, values: insertValues(byId(creations)) };
      const results = await together(creations.length ? [lock, insert, SQL.position] : [lock, SQL.position]);
      const [locked = [], added = []] = creations.length ? results : [results[0], []];
      const plants = new Map((locked as PlantRow[]).map((r) => [BigInt(r.id), plantFromRow(r)]));
      const position = BigInt(String(results.at(-1)![0]!.position));
      const creating = new Set(creations.map((p) => p.id));
      await lockRemade(
        ids.filter((id) => !plants.has(id) && !creating.has(id)),
        plants,
      );
      return { plants, position, inserted: new Set(added.map((r) => BigInt(r.id as string))) };
    },
    async insert(plants) {
      const [rows = []] = await together([{ ...SQL.insert, values: insertValues(byId(plants)) }]);
      return new Set(rows.map((r) => BigInt(r.id as string)));
    },
    // Nothing is read back from the rest: PostgreSQL may get them with the COMMIT.
    async update(updates) {
      // One statement for every update: PostgreSQL compares the values itself, so a rename that
      // keeps the tag adds no index entry (a HOT update). Then plant_words follows the names that
      // changed: only the words one name has and the other has not.
      await later({ ...SQL.update, values: columns(updates.map((u) => u.plant)) });
      const { gone, added } = entriesChanged(updates);
      if (gone.words.length) await later({ text: WORDS_SQL.remove, values: [gone.words, gone.ids] });
      if (added.words.length) await later({ text: WORDS_SQL.add, values: [added.words, added.ids] });
    },
    async delete(plants) {
      // The plants were read locked in this transaction: their names are the ones stored.
      const { words, ids } = entriesOf(plants);
      await later({ ...SQL.delete, values: [plants.map((p) => String(p.id))] });
      if (words.length) await later({ text: WORDS_SQL.remove, values: [words, ids] });
    },
    log: (events) => logChanges(commitWith, events),
  };
}
