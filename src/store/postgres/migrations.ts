import { escapeIdentifier, type PoolClient, type QueryConfig } from 'pg';
import { isSystemSchema } from '../../config/parse.js';
import { StoreMissingError } from '../../domain/errors.js';
import { newerSchema } from '../schema-version.js';
import { beginWith, IDLE_IN_TRANSACTION_MS } from './connection.js';
import { fillPlantWords } from './plant-words.js';

/**
 * Statements of the filters' migration (version 4) that version 5 ran again, kept as their text:
 * the words trigger of inserted plants, and the statement that filled plant_words.
 */
const wordsUpkeep = {
  insertTrigger: 'plant_words_insert',
  fillWords: `INSERT INTO plant_words (word, id) SELECT w.word, p.id FROM plants p, unnest(plant_name_words(p.name)) AS w (word)`,
} as const;

/**
 * The words trigger's function, which every version of it writes alike for inserted and deleted
 * plants; `create` is CREATE or CREATE OR REPLACE, `onUpdate` what it does for a write's new names.
 */
const wordsFollow = (
  create: string,
  onUpdate: string,
) => `   ${create} FUNCTION plant_words_follow() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
   BEGIN
     IF TG_OP = 'INSERT' THEN
       INSERT INTO plant_words (word, id)
       SELECT w.word, n.id FROM new_plants n, unnest(plant_name_words(n.name)) AS w (word) ON CONFLICT DO NOTHING;
     ELSIF TG_OP = 'DELETE' THEN
       DELETE FROM plant_words pw USING old_plants o, unnest(plant_name_words(o.name)) AS w (word)
       WHERE pw.word = w.word AND pw.id = o.id;
     ELSE
       ${onUpdate}
     END IF;
     RETURN NULL;
   END $$;`;

/** Runs one statement of a migration, in its transaction. */
export type MigrationQuery = (query: QueryConfig) => Promise<{ rows: unknown[] }>;

/** A migration: SQL, or steps that need the application too (its statements in order). */
export type PostgresMigration = string | ((query: MigrationQuery) => Promise<void>);

/**
 * Starts a new change log (a restore): its floor the time now in microseconds, or past its last
 * position if that is higher.
 */
export const POSTGRES_NEW_CHANGE_LOG = `UPDATE change_floor SET floor = greatest(
     (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, (SELECT max(seq) + 1 FROM changes), floor);`;

/**
 * Versioned schema changes, applied in order; `schema_migrations` records which ran. Never edit
 * a released entry: append a new one. The tables mirror the SQLite store's: int64 ids as bigint,
 * strings as text (NUL, which text cannot hold, is refused by the API before it gets here).
 */
export const postgresMigrations: PostgresMigration[] = [
  `CREATE TABLE plants (
     id   bigint PRIMARY KEY,
     name text NOT NULL,
     tag  text
   );
   CREATE TABLE tokens (
     id         text PRIMARY KEY,
     name       text NOT NULL,
     hash       text NOT NULL UNIQUE,
     prefix     text NOT NULL,
     scopes     text[] NOT NULL,
     created_at timestamptz NOT NULL,
     expires_at timestamptz,
     revoked_at timestamptz
   );`,
  // Webhooks: endpoints, the outbox of events, and one delivery row per event and endpoint.
  // Times are epoch milliseconds (bigint), as in the SQLite store, so the dispatcher reads both alike.
  `CREATE TABLE webhook_endpoints (
     id              text PRIMARY KEY,
     url             text NOT NULL,
     events          text[] NOT NULL,
     secret          text NOT NULL,
     enabled         boolean NOT NULL DEFAULT true,
     disabled_reason text,
     created_at      bigint NOT NULL
   );
   CREATE TABLE events (
     seq        bigserial PRIMARY KEY,
     id         text NOT NULL UNIQUE,
     type       text NOT NULL,
     plant_id   bigint NOT NULL,
     body       text NOT NULL,
     created_at bigint NOT NULL
   );
   CREATE TABLE deliveries (
     event_seq       bigint NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
     endpoint_id     text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
     plant_id        bigint NOT NULL,
     state           text NOT NULL DEFAULT 'pending',
     attempts        integer NOT NULL DEFAULT 0,
     next_attempt_at bigint NOT NULL,
     locked_until    bigint,
     last_status     integer,
     last_error      text,
     last_attempt_at bigint,
     finished_at     bigint,
     PRIMARY KEY (endpoint_id, event_seq)
   );
   CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
   CREATE INDEX deliveries_order ON deliveries (endpoint_id, plant_id, event_seq) WHERE state = 'pending';
   CREATE INDEX deliveries_event ON deliveries (event_seq);`,
  // Tokens keep no part of an operator's own value (PLANT_STORE_TOKEN): only a managed token's
  // "pst_" and 4 of its random characters may be kept, to tell tokens apart.
  `UPDATE tokens SET prefix = ''
   WHERE name = 'bootstrap (PLANT_STORE_TOKEN)' OR substr(prefix, 1, 4) <> 'pst_' OR length(prefix) <> 8;`,
  // The list's filters (plant-filters.ts). plants_tag walks one tag's plants in id order from a
  // cursor. plant_words holds each word of each name, as PostgreSQL's text search splits it
  // ('simple': lower case, no stop words, no stemming) once Latin accents are folded (NFD, marks
  // removed: no extension needed), keyed (word, id) so that a word's plants are walked in id order
  // from a cursor. A GIN index on a tsvector would find the same plants, but not in id order: a
  // page would cost every match. Statement triggers keep the words in step with every write of
  // plants, in its own transaction (write path, import; restore fills the words once its plants
  // are in), whatever the search_path of the session that writes (the trigger keeps the
  // migration's). Writes wait while the words of the plants already stored are filled in, so
  // none is missed. The text is built from wordsUpkeep's and must stay what it was.
  // (The sort of the words' key gets room to stay in memory: a third of the time on 1M plants.)
  `LOCK TABLE plants IN SHARE MODE;
   SET LOCAL maintenance_work_mem = '256MB';
   CREATE INDEX plants_tag ON plants (tag, id);
   CREATE FUNCTION plant_name_words(name text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
   AS $$ SELECT tsvector_to_array(to_tsvector('simple', regexp_replace(normalize(name, NFD), '[\\u0300-\\u036f]', '', 'g'))) $$;
   CREATE TABLE plant_words (word text NOT NULL, id bigint NOT NULL);
   ${wordsUpkeep.fillWords};
   ALTER TABLE plant_words ADD PRIMARY KEY (word, id);
${wordsFollow(
  'CREATE',
  `DELETE FROM plant_words pw USING old_plants o JOIN new_plants n USING (id), unnest(plant_name_words(o.name)) AS w (word)
       WHERE o.name <> n.name AND pw.word = w.word AND pw.id = o.id;
       INSERT INTO plant_words (word, id)
       SELECT w.word, n.id FROM old_plants o JOIN new_plants n USING (id), unnest(plant_name_words(n.name)) AS w (word)
       WHERE o.name <> n.name ON CONFLICT DO NOTHING;`,
)}
   CREATE TRIGGER ${wordsUpkeep.insertTrigger} AFTER INSERT ON plants REFERENCING NEW TABLE AS new_plants
     FOR EACH STATEMENT EXECUTE FUNCTION plant_words_follow();
   CREATE TRIGGER plant_words_update AFTER UPDATE ON plants REFERENCING OLD TABLE AS old_plants NEW TABLE AS new_plants
     FOR EACH STATEMENT EXECUTE FUNCTION plant_words_follow();
   CREATE TRIGGER plant_words_delete AFTER DELETE ON plants REFERENCING OLD TABLE AS old_plants
     FOR EACH STATEMENT EXECUTE FUNCTION plant_words_follow();
   ANALYZE plants, plant_words;`,
  // The words of a name are split at every ASCII character that is not a letter or a digit
  // before the text search reads them, as the search text is (searchWords): the text search
  // alone keeps "2.5", "sp.1", "kerrii/variegata", "example.com" or "-5" as one word, which a
  // search for "variegata" or "5" never found. The words of the plants stored are made again,
  // the key dropped while they go in and built once at the end; writes wait meanwhile.
  `LOCK TABLE plants IN SHARE MODE;
   SET LOCAL maintenance_work_mem = '256MB';
   CREATE OR REPLACE FUNCTION plant_name_words(name text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
   AS $$ SELECT tsvector_to_array(to_tsvector('simple', regexp_replace(
           regexp_replace(normalize(name, NFD), '[\u0300-\u036f]', '', 'g'),
           '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]', ' ', 'g'))) $$;
   ALTER TABLE plant_words DROP CONSTRAINT plant_words_pkey;
   TRUNCATE plant_words;
   ${wordsUpkeep.fillWords};
   ALTER TABLE plant_words ADD PRIMARY KEY (word, id);
   ANALYZE plant_words;`,
  // A new name takes out only the words the old one had and it has not, and puts in only those
  // it has and the old one had not: the words both share keep their entries. Renaming
  // "Monstera deliciosa" to "Monstera deliciosa variegata" now writes one entry instead of taking
  // out two and putting three back, and each name is split once, not once per statement
  // (docs/performance.md, where a PUT goes).
  wordsFollow(
    'CREATE OR REPLACE',
    `WITH renamed AS (
         SELECT o.id, plant_name_words(o.name) AS was, plant_name_words(n.name) AS now
         FROM old_plants o JOIN new_plants n USING (id) WHERE o.name <> n.name
       ), gone AS (
         DELETE FROM plant_words pw USING renamed r, unnest(r.was) AS w (word)
         WHERE pw.word = w.word AND pw.id = r.id AND w.word <> ALL (r.now)
       )
       INSERT INTO plant_words (word, id)
       SELECT w.word, r.id FROM renamed r, unnest(r.now) AS w (word) WHERE w.word <> ALL (r.was)
       ON CONFLICT DO NOTHING;`,
  ),
  // The dispatcher claims each endpoint's due deliveries on their own, so that one subscriber's
  // backlog cannot hide another's (src/events/fair-share.ts): it walks one endpoint's pending
  // deliveries in the order they are due. Nothing walks all endpoints' in that order any more.
  `DROP INDEX deliveries_due;
   CREATE INDEX deliveries_endpoint_due ON deliveries (endpoint_id, next_attempt_at, event_seq) WHERE state = 'pending';`,
  // plant_words holds the words the application gives it (plant-words.ts), under the search's
  // one rule, the same on both stores, instead of what PostgreSQL's text search made of the
  // names: that split "x²" into "x" and "2" and folded Greek accents, where SQLite's FTS5 did
  // otherwise. The statements that write plants write their words, in the same transaction, so
  // the triggers and the functions go. The words of the plants stored are made again, the key
  // dropped while they go in and built once at the end; writes wait meanwhile.
  async (query) => {
    await query({
      text: `LOCK TABLE plants IN SHARE MODE;
             SET LOCAL maintenance_work_mem = '256MB';
             DROP TRIGGER plant_words_insert ON plants;
             DROP TRIGGER plant_words_update ON plants;
             DROP TRIGGER plant_words_delete ON plants;
             DROP FUNCTION plant_words_follow();
             DROP FUNCTION plant_name_words(text);
             ALTER TABLE plant_words DROP CONSTRAINT plant_words_pkey;
             TRUNCATE plant_words;`,
    });
    await fillPlantWords(query);
    await query({ text: 'ALTER TABLE plant_words ADD PRIMARY KEY (word, id); ANALYZE plant_words;' });
  },
  // The change log (src/store/changes.ts): every change to a plant gets a row of events from now
  // on, subscribed to or not, and its seq is its position, given by the write path under the
  // log's lock (changes.ts), not by the sequence. A new change has no id of its own (its
  // webhook-id is msg_ and its position; events from before keep theirs), so the unique index of
  // ids, a random place to write per row, goes. tag and old_tag are what the feed's tag filter
  // reads; events_plant, one plant's history. change_log's floor is the first position the log
  // keeps: a new log starts at the time it was made in microseconds, past any position a log
  // before it (a store this one is restored from) can have reached. Rows below it are older
  // events kept for their webhook deliveries.
  `ALTER TABLE events ADD COLUMN tag text, ADD COLUMN old_tag text, ALTER COLUMN id DROP NOT NULL,
     ALTER COLUMN seq DROP DEFAULT, DROP CONSTRAINT events_id_key;
   DROP SEQUENCE events_seq_seq;
   CREATE INDEX events_plant ON events (plant_id, seq);
   CREATE TABLE change_log (floor bigint NOT NULL);
   INSERT INTO change_log (floor) SELECT greatest((extract(epoch FROM clock_timestamp()) * 1000000)::bigint,
     coalesce(max(seq), 0) + 1) FROM events;`,
  // Webhooks an operator can steer. An endpoint keeps its last failed attempt's reason and time
  // (`webhook list`), which outlive the deliveries the change log prunes. A delivery given up and
  // sent again by `webhook redeliver` keeps when that was: its retry window starts there instead
  // of at its event's time.
  `ALTER TABLE webhook_endpoints ADD COLUMN last_failure text, ADD COLUMN last_failure_at bigint;
   ALTER TABLE deliveries ADD COLUMN redelivered_at bigint;`,
  // The change log is named for what it is: \`events\` (the webhook outbox's name, from before the
  // log) becomes \`changes\`, and \`change_log\`, which holds only the log's floor, \`change_floor\`.
  // Renamed in place: every row, its position (seq) and the deliveries that point at it stay.
  `ALTER TABLE events RENAME TO changes;
   ALTER INDEX events_pkey RENAME TO changes_pkey;
   ALTER INDEX events_plant RENAME TO changes_plant;
   ALTER TABLE change_log RENAME TO change_floor;`,
  // Stream tickets: a page's short-lived credential for the changes stream, kept as its hash,
  // with the token that made it (by hash: its rights are checked there) or an identity
  // provider's subject and scopes. Removed a day past their expiry.
  `CREATE TABLE stream_tickets (
     hash       text PRIMARY KEY,
     token_hash text,
     subject    text,
     scopes     text[] NOT NULL,
     expires_at timestamptz NOT NULL
   );
   CREATE INDEX stream_tickets_expiry ON stream_tickets (expires_at);`,
];

/**
 * A migration may rewrite a large table, and ANALYZE reads its sample from all over one: they
 * get far longer than a request's statement timeout.
 */
export const MIGRATION_TIMEOUT_MS = 10 * 60_000;

type Query = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

/**
 * The store's schema exists, and the store's tables in it (schema_migrations says they were
 * made): a command other than serve, migrate and restore creates neither.
 */
async function storeMustExist(query: Query, schema: string | null): Promise<void> {
  if (schema === null) throw new StoreMissingError('no schema of the search_path exists');
  const { rows } = await query(
    `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema,
            to_regclass(format('%I.schema_migrations', $1::text)) IS NOT NULL AS tables`,
    [schema],
  );
  const found = rows[0] as { schema: boolean; tables: boolean };
  if (!found.schema) throw new StoreMissingError(`the schema "${schema}" does not exist`);
  if (!found.tables) throw new StoreMissingError(`the schema "${schema}" holds no plant-store tables`);
}

/** What PostgreSQL says when a CREATE meets a schema, table, type or function already there. */
const ALREADY_THERE = new Set(['23505', '42P06', '42P07', '42710']);

/**
 * Applies the pending migrations in one transaction under an advisory lock keyed by the schema
 * and held to its end (a transaction's lock: nothing stays in the session), so instances starting
 * together wait for each other and the schema is migrated once. Resolves to the number applied.
 *
 * Once more when that transaction met something already there: a backend brings its catalogue
 * cache up to date when a transaction starts or it locks a table, not when an advisory lock it
 * waited on is granted. The lock's own statement looks the store's schema up (it is on the
 * search_path) and finds it missing while the first instance creates it; a backend whose cache
 * holds all else the migrations read (one that ran them before: behind a pooler, any) reads
 * nothing afresh once granted the lock, and its CREATE SCHEMA IF NOT EXISTS fails on the
 * duplicate. Its next transaction starts with what the first one committed.
 */
export async function runMigrations(
  client: PoolClient,
  schema: string | undefined,
  options: { mustExist?: boolean } = {},
): Promise<number> {
  try {
    return await migrateOnce(client, schema, options);
  } catch (err) {
    if (!ALREADY_THERE.has((err as { code?: string }).code ?? '')) throw err;
    return migrateOnce(client, schema, options);
  }
}

async function migrateOnce(
  client: PoolClient,
  schema: string | undefined,
  { mustExist = false }: { mustExist?: boolean },
): Promise<number> {
  // pg takes a per-query query_timeout (lib/client.js); @types/pg does not declare it.
  const query = (text: string, values?: unknown[]) =>
    client.query({ text, values, query_timeout: MIGRATION_TIMEOUT_MS + 5_000 } as QueryConfig);
  // The search_path is the store's schema from the first statement on, created below if missing.
  await query(beginWith(schema, { statementTimeoutMs: MIGRATION_TIMEOUT_MS, idleMs: IDLE_IN_TRANSACTION_MS }));
  try {
    // The lock first: the checks below are of what the instance holding it may be changing.
    await query(
      `SELECT pg_advisory_xact_lock(hashtext('plant-store migrations ' || ${
        schema === undefined ? "coalesce(current_schema()::text, '')" : '$1::text'
      }))`,
      schema === undefined ? [] : [schema],
    );
    const server = (
      await query(`SELECT current_setting('server_encoding') AS server_encoding, current_schema() AS current`)
    ).rows[0] as { server_encoding: string; current: string | null };
    if (server.server_encoding !== 'UTF8') {
      throw new Error(`the PostgreSQL database must use UTF8 encoding (it uses ${server.server_encoding})`);
    }
    // Without ?schema=, the tables go where the server's search_path says (a role's setting, an
    // options= in the URL): never into PostgreSQL's own catalogue. (?schema= was checked already.)
    if (schema === undefined && server.current !== null && isSystemSchema(server.current)) {
      throw new Error(
        `the store's tables would go into "${server.current}", PostgreSQL's own schema, the first of the ` +
          'search_path: name a schema of your own with ?schema= in DATABASE_URL',
      );
    }
    if (mustExist) await storeMustExist(query, schema ?? server.current);
    // A plain identifier (the settings checked it), quoted all the same: `user` or `select` is a
    // name PostgreSQL takes only quoted here.
    if (schema !== undefined) await query(`CREATE SCHEMA IF NOT EXISTS ${escapeIdentifier(schema)}`);
    await query(`CREATE TABLE IF NOT EXISTS schema_migrations (
       version    integer PRIMARY KEY,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`);
    const { rows } = await query('SELECT coalesce(max(version), 0) AS version FROM schema_migrations');
    const current = Number((rows[0] as { version: number }).version);
    if (current > postgresMigrations.length) throw newerSchema(current, postgresMigrations.length);
    const pending = postgresMigrations.slice(current);
    for (const [i, migration] of pending.entries()) {
      if (typeof migration === 'string') await query(migration);
      else await migration((q) => query(q.text, q.values));
      await query('INSERT INTO schema_migrations (version) VALUES ($1)', [current + i + 1]);
    }
    await query('COMMIT');
    return pending.length;
  } catch (err) {
    await query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
