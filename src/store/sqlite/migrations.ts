import type Database from 'better-sqlite3';
import { newerSchema } from '../schema-version.js';
import { INDEXED_WORDS_FUNCTION, registerIndexedWords } from './search-index.js';

/**
 * What keeps the list's filters in step with plants as they change: the tag index, maintained row
 * by row by SQLite, and plants_fts, the words of names, which the write path's own statements
 * keep (plant-tx.ts). Restore (backup.ts), which fills an empty store in one transaction, drops the
 * tag index, inserts, then creates it again from this same statement and fills plants_fts once:
 * one walk of the plants instead of an FTS write per plant, and nothing that can drift from what
 * the migration made.
 */
export const sqliteFilterUpkeep = {
  tagIndex: `CREATE INDEX plants_tag ON plants (tag, id);`,
  /**
   * Fills plants_fts, empty, with the words of the plants stored (search-index.ts), walked in id
   * order: FTS5 gathers them in memory while the ids ascend and writes few segments.
   */
  ftsFill: `INSERT INTO plants_fts (rowid, words) SELECT id, ${INDEXED_WORDS_FUNCTION}(name) FROM plants;`,
  /** Takes every word out of plants_fts (a restore's store is empty: then it has none to take). */
  ftsEmpty: `INSERT INTO plants_fts (plants_fts) VALUES ('delete-all');`,
  /**
   * Merges plants_fts into one segment. A bulk load (a rebuild, an import) leaves it in several
   * large ones, and a search seeks its words in each, so a search costs as many seeks as there
   * are segments; in one segment, it costs on a million plants what it costs on a thousand.
   * Writes since then add small segments, which FTS5 merges as it goes.
   */
  ftsOptimize: `INSERT INTO plants_fts (plants_fts) VALUES ('optimize');`,
  /**
   * The same merge, a step of about 200 pages (4 KiB each) at a time: with a negative count FTS5
   * merges every segment into one, and once one is left a step changes nothing but counts the
   * command itself as a change. On 1,000,000 plants: 15 steps of at most 140 ms, 0.6 s in all.
   */
  ftsMergeStep: `INSERT INTO plants_fts (plants_fts, rank) VALUES ('merge', -200);`,
  drop: `DROP INDEX plants_tag;`,
} as const;

/**
 * Filled plants_fts from the names stored, when it took them from plants itself (an external
 * content table, versions 4 to 6); kept as those migrations' text.
 */
const ftsRebuild = `INSERT INTO plants_fts (plants_fts) VALUES ('rebuild');`;

/**
 * The triggers the filters' migration (version 4) made to copy each name into plants_fts, kept
 * as that migration's text; version 5 drops them (see there).
 */
const ftsTriggers = `CREATE TRIGGER plants_fts_insert AFTER INSERT ON plants BEGIN
     INSERT INTO plants_fts (rowid, name) VALUES (new.id, new.name);
   END;
   CREATE TRIGGER plants_fts_delete AFTER DELETE ON plants BEGIN
     INSERT INTO plants_fts (plants_fts, rowid, name) VALUES ('delete', old.id, old.name);
   END;
   CREATE TRIGGER plants_fts_update AFTER UPDATE OF id, name ON plants
   WHEN old.id IS NOT new.id OR old.name IS NOT new.name BEGIN
     INSERT INTO plants_fts (plants_fts, rowid, name) VALUES ('delete', old.id, old.name);
     INSERT INTO plants_fts (rowid, name) VALUES (new.id, new.name);
   END;`;

/** The time now, in microseconds since 1970: where a new change log starts. */
const SQLITE_NOW_MICROSECONDS = `CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)`;

/**
 * Starts a new change log (a restore): its floor the time now in microseconds, or past its last
 * position if that is higher.
 */
export const sqliteNewChangeLog = `UPDATE change_floor SET floor = max(${SQLITE_NOW_MICROSECONDS},
     coalesce((SELECT max(seq) FROM changes), 0) + 1, floor);`;

/**
 * Versioned schema changes, applied in order; `PRAGMA user_version` records how many ran.
 * Never edit a released entry: append a new one.
 */
export const sqliteMigrations: string[] = [
  `CREATE TABLE plants (
     id   INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     tag  TEXT
   ) STRICT;
   CREATE TABLE tokens (
     id         TEXT PRIMARY KEY,
     name       TEXT NOT NULL,
     hash       TEXT NOT NULL UNIQUE,
     prefix     TEXT NOT NULL,
     scopes     TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER,
     revoked_at INTEGER
   ) STRICT;`,
  // Webhooks: endpoints, the outbox of events, and one delivery row per event and endpoint.
  `CREATE TABLE webhook_endpoints (
     id              TEXT PRIMARY KEY,
     url             TEXT NOT NULL,
     events          TEXT NOT NULL,
     secret          TEXT NOT NULL,
     enabled         INTEGER NOT NULL DEFAULT 1,
     disabled_reason TEXT,
     created_at      INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE events (
     seq        INTEGER PRIMARY KEY AUTOINCREMENT,
     id         TEXT NOT NULL UNIQUE,
     type       TEXT NOT NULL,
     plant_id   INTEGER NOT NULL,
     body       TEXT NOT NULL,
     created_at INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE deliveries (
     event_seq       INTEGER NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
     endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
     plant_id        INTEGER NOT NULL,
     state           TEXT NOT NULL DEFAULT 'pending',
     attempts        INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL,
     locked_until    INTEGER,
     last_status     INTEGER,
     last_error      TEXT,
     last_attempt_at INTEGER,
     finished_at     INTEGER,
     PRIMARY KEY (endpoint_id, event_seq)
   ) STRICT;
   CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
   CREATE INDEX deliveries_order ON deliveries (endpoint_id, plant_id, event_seq) WHERE state = 'pending';
   CREATE INDEX deliveries_event ON deliveries (event_seq);`,
  // Tokens keep no part of an operator's own value (PLANT_STORE_TOKEN): only a managed token's
  // "pst_" and 4 of its random characters may be kept, to tell tokens apart.
  `UPDATE tokens SET prefix = ''
   WHERE name = 'bootstrap (PLANT_STORE_TOKEN)' OR substr(prefix, 1, 4) <> 'pst_' OR length(prefix) <> 8;`,
  // The list's filters. plants_tag walks one tag's plants in id order from a cursor. plants_fts
  // holds the words of names (case and Latin accents folded) with their plants' ids, and FTS5
  // walks a word's ids in order, so a page of a search reads about a page of entries. Triggers
  // kept it in step with every write of plants until version 5; 'rebuild' fills it from the
  // plants already stored. Its text is built from sqliteFilterUpkeep's, ftsRebuild and ftsTriggers
  // and must stay what it was.
  `${sqliteFilterUpkeep.tagIndex}
   CREATE VIRTUAL TABLE plants_fts USING fts5 (
     name, content = 'plants', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
   );
   ${ftsTriggers}
   ${ftsRebuild}`,
  // plants_fts is kept by the write path's statements instead of triggers. A trigger makes every
  // statement that writes plants open a statement savepoint, and FTS5 writes its pending words to
  // disk at each savepoint: a new index segment for every plant written, and the merges of all of
  // them, instead of one segment per transaction: most of the cost of a write on a large store
  // (docs/performance.md).
  `DROP TRIGGER plants_fts_insert;
   DROP TRIGGER plants_fts_delete;
   DROP TRIGGER plants_fts_update;`,
  // plants_fts made again without its table of name lengths (columnsize = 0), which only ranking
  // reads, and a search here is in id order, never ranked. That table has a row per plant keyed
  // by its id, so every rename and delete wrote a page of it at a random place (docs/performance.md
  // has what that cost). The words are filled again from the plants and merged into one segment.
  `DROP TABLE plants_fts;
   CREATE VIRTUAL TABLE plants_fts USING fts5 (
     name, content = 'plants', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2', columnsize = 0
   );
   ${ftsRebuild}
   ${sqliteFilterUpkeep.ftsOptimize}`,
  // The dispatcher claims each endpoint's due deliveries on their own, so that one subscriber's
  // backlog cannot hide another's (src/events/fair-share.ts): it walks one endpoint's pending
  // deliveries in the order they are due. Nothing walks all endpoints' in that order any more.
  `DROP INDEX deliveries_due;
   CREATE INDEX deliveries_endpoint_due ON deliveries (endpoint_id, next_attempt_at, event_seq) WHERE state = 'pending';`,
  // plants_fts holds the words the application gives it (search-index.ts), under the search's one
  // rule, the same on both stores, instead of what FTS5's unicode61 tokenizer made of the names:
  // that split Devanagari words at their vowel signs and kept "x²" apart from "x2", where
  // PostgreSQL's text search did otherwise. It keeps no copy of them (content = ''): the write
  // path tells it a name's words to take out, as it did with the name. The words of the plants
  // stored are filled in and merged into one segment.
  `DROP TABLE plants_fts;
   CREATE VIRTUAL TABLE plants_fts USING fts5 (words, content = '', columnsize = 0, tokenize = 'ascii');
   ${sqliteFilterUpkeep.ftsFill}
   ${sqliteFilterUpkeep.ftsOptimize}`,
  // The change log (src/store/changes.ts): every change to a plant gets a row of events from now
  // on, subscribed to or not, and its seq is its position. The table is made again without what
  // a row per write cannot afford: the unique index of random ids (a new change's webhook-id is
  // msg_ and its position; events from before keep theirs) and AUTOINCREMENT's counter, a page
  // each per commit (the write path gives positions itself: changes.ts). tag and old_tag are what
  // the feed's tag filter reads; events_plant, one plant's history. change_log's floor is the
  // first position the log keeps: a new log starts at the time it was made in microseconds, past
  // any position a log before it (a store this one is restored from) can have reached. Rows below
  // it are older events kept for their webhook deliveries. (Foreign keys are off while the table
  // is made again: migrate() below.)
  `CREATE TABLE events_new (
     seq        INTEGER PRIMARY KEY,
     id         TEXT,
     type       TEXT NOT NULL,
     plant_id   INTEGER NOT NULL,
     body       TEXT NOT NULL,
     tag        TEXT,
     old_tag    TEXT,
     created_at INTEGER NOT NULL
   ) STRICT;
   INSERT INTO events_new (seq, id, type, plant_id, body, created_at)
   SELECT seq, id, type, plant_id, body, created_at FROM events;
   DROP TABLE events;
   ALTER TABLE events_new RENAME TO events;
   DELETE FROM sqlite_sequence WHERE name = 'events';
   CREATE INDEX events_plant ON events (plant_id, seq);
   CREATE TABLE change_log (floor INTEGER NOT NULL) STRICT;
   INSERT INTO change_log (floor)
   SELECT max(${SQLITE_NOW_MICROSECONDS}, coalesce((SELECT max(seq) FROM events), 0) + 1);`,
  // Webhooks an operator can steer. An endpoint keeps its last failed attempt's reason and time
  // (`webhook list`), which outlive the deliveries the change log prunes. A delivery given up and
  // sent again by `webhook redeliver` keeps when that was: its retry window starts there instead
  // of at its event's time.
  `ALTER TABLE webhook_endpoints ADD COLUMN last_failure TEXT;
   ALTER TABLE webhook_endpoints ADD COLUMN last_failure_at INTEGER;
   ALTER TABLE deliveries ADD COLUMN redelivered_at INTEGER;`,
  // The change log is named for what it is: \`events\` (the webhook outbox's name, from before the
  // log) becomes \`changes\`, and \`change_log\`, which holds only the log's floor, \`change_floor\`.
  // Renamed in place: every row, its position (seq) and the deliveries that point at it stay
  // (SQLite rewrites the deliveries' foreign key to the new name). An index cannot be renamed:
  // events_plant is made again under the table's name.
  `ALTER TABLE events RENAME TO changes;
   DROP INDEX events_plant;
   CREATE INDEX changes_plant ON changes (plant_id, seq);
   ALTER TABLE change_log RENAME TO change_floor;`,
  // Stream tickets: a page's short-lived credential for the changes stream, kept as its hash,
  // with the token that made it (by hash: its rights are checked there) or an identity
  // provider's subject and scopes. Removed a day past their expiry.
  `CREATE TABLE stream_tickets (
     hash       TEXT PRIMARY KEY,
     token_hash TEXT,
     subject    TEXT,
     scopes     TEXT NOT NULL,
     expires_at INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX stream_tickets_expiry ON stream_tickets (expires_at);`,
];

/**
 * Applies the pending migrations; resolves to how many ran. A store whose schema is current is
 * only read here: opening it writes nothing, so a full disk cannot stop a start or an export.
 */
export function migrate(db: Database.Database): number {
  registerIndexedWords(db);
  const version = () => Number(db.pragma('user_version', { simple: true }));
  if (version() > sqliteMigrations.length) throw newerSchema(version(), sqliteMigrations.length);
  if (version() === sqliteMigrations.length) return 0;
  // Two processes starting together: IMMEDIATE takes the write lock first, and the one that waited
  // finds the schema current. The migration's commit is synced at once (FULL), not by the writer.
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = FULL');
  // A migration that makes a table again (SQLite's way to change one) drops the old one, and with
  // foreign keys on that would delete the rows that refer to it: they are off meanwhile (a
  // transaction cannot change them), and checked before the commit.
  db.pragma('foreign_keys = OFF');
  try {
    return db
      .transaction(() => {
        const from = version();
        for (const sql of sqliteMigrations.slice(from)) db.exec(sql);
        const broken = db.pragma('foreign_key_check') as unknown[];
        if (broken.length > 0) throw new Error(`the migration broke ${broken.length} foreign key(s)`);
        db.pragma(`user_version = ${sqliteMigrations.length}`);
        return Math.max(0, sqliteMigrations.length - from);
      })
      .immediate();
  } finally {
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
  }
}
