// The list's filters measured on the stores themselves, without HTTP: a store of 1,000 and one of
// BENCH_BIG_STORE plants on each kind of store, filled at the schema version before the filters,
// then migrated (the time the words and indexes take to build), then `listPlants` timed per case.
// `node --import tsx scripts/bench/filter-queries.ts`
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { PlantListQuery } from '../../src/domain/plant-query.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { postgresMigrations } from '../../src/store/postgres/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.js';
import type { Store } from '../../src/store/store.js';
import { fmt, median, table } from './report.js';
import { FILTERED, seededId, seededPlant } from './seed.js';
import { searchWords } from '../../src/domain/search-words.js';

const BIG = Number(process.env.BENCH_BIG_STORE ?? 1_000_000);
const SERVER = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
/** The schema version before the filters' migration. */
const BEFORE = 3;
const CALLS = 200;

function rows(size: number, from: number, to: number) {
  return Array.from({ length: Math.min(to, size) - from }, (_, k) => seededPlant(from + k, size));
}

async function sqliteAt(dir: string, size: number): Promise<Store> {
  const path = join(dir, `filters-${size}.db`);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  for (const sql of sqliteMigrations.slice(0, BEFORE)) db.exec(sql);
  db.pragma(`user_version = ${BEFORE}`);
  const insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)');
  db.transaction(() => rows(size, 0, size).forEach((p) => insert.run(p.id, p.name, p.tag ?? null)))();
  db.close();
  return new SqliteStore(path);
}

async function postgresAt(schema: string, size: number): Promise<Store> {
  const admin = new pg.Client({ connectionString: SERVER, options: `-c search_path=${schema}` });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(postgresMigrations.slice(0, BEFORE).join(';\n'));
  await admin.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
                     INSERT INTO schema_migrations (version) SELECT generate_series(1, ${BEFORE})`);
  for (let start = 0; start < size; start += 50_000) {
    const batch = rows(size, start, start + 50_000);
    await admin.query({
      text: 'INSERT INTO plants (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])',
      values: [batch.map((p) => String(p.id)), batch.map((p) => p.name), batch.map((p) => p.tag)],
    });
  }
  await admin.query('VACUUM ANALYZE plants');
  await admin.end();
  return new PostgresStore(`${SERVER}?schema=${schema}`, 2);
}

const cases: Record<string, (size: number) => PlantListQuery> = {
  'tag=common': () => ({ tags: [FILTERED.commonTag] }),
  'tag=rare': () => ({ tags: [FILTERED.rareTag] }),
  'tag=common&tag=rare&after=': (size) => ({ tags: [FILTERED.commonTag, FILTERED.rareTag], after: randomAfter(size) }),
  'q=common': () => ({ search: searchWords(FILTERED.commonWord) }),
  'q=rare': () => ({ search: searchWords(FILTERED.rareWord) }),
  'q=common&after=': (size) => ({ search: searchWords(FILTERED.commonWord), after: randomAfter(size) }),
  'q=plant+rare': () => ({ search: searchWords(`Plant ${FILTERED.rareWord}`) }),
};
const randomAfter = (size: number) => seededId(Math.floor(Math.random() * size));

async function measure(store: Store, size: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, query] of Object.entries(cases)) {
    for (let i = 0; i < 20; i++) await store.plants.list(query(size), 21);
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      await store.plants.list(query(size), 21);
      times.push(performance.now() - started);
    }
    out[name] = median(times);
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'plant-store-filters-'));
const schemas: string[] = [];
try {
  for (const kind of ['sqlite', 'postgres'] as const) {
    const results: Record<number, Record<string, number>> = {};
    for (const size of [1000, BIG]) {
      const schema = `bench_filters_${randomBytes(4).toString('hex')}`;
      if (kind === 'postgres') schemas.push(schema);
      const store = kind === 'sqlite' ? await sqliteAt(dir, size) : await postgresAt(schema, size);
      const started = performance.now();
      await store.migrate();
      console.log(
        `${kind}: migrated ${size.toLocaleString('en')} plants in ${fmt((performance.now() - started) / 1000)} s`,
      );
      results[size] = await measure(store, size);
      await store.close();
    }
    console.log(`\n## ${kind}: listPlants, page of 21, median of ${CALLS} calls (ms)\n`);
    table(
      ['case', '1,000', BIG.toLocaleString('en'), 'big / small'],
      Object.keys(cases).map((c) => [c, results[1000]![c]!, results[BIG]![c]!, results[BIG]![c]! / results[1000]![c]!]),
    );
    console.log('(target <= 1.5)\n');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
