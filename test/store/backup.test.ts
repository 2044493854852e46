// The whole store for a backup, on both stores, without the command line: a snapshot reads every
// kind of record as of its moment; a restore writes each kind through its part, whole or not at
// all, and writes no outbox event. And every table of each store belongs to a kind a backup
// holds (the registry: use-cases/backup-records/registry.ts) or is named as left out on purpose,
// so that a new table cannot be forgotten by `backup`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { searchWords } from '../../src/domain/search-words.js';
import type { RecordKind } from '../../src/store/backup.js';
import { openStore } from '../../src/store/open-store.js';
import { POSTGRES_BACKUP, POSTGRES_NOT_BACKED_UP } from '../../src/store/postgres/postgres-store.js';
import { KNOWN_SCHEMA_VERSIONS } from '../../src/store/schema-versions.js';
import { SQLITE_BACKUP, SQLITE_NOT_BACKED_UP } from '../../src/store/sqlite/sqlite-store.js';
import { BACKUP_RECORDS } from '../../src/use-cases/backup-records/registry.js';
import { suiteStore } from '../support/suite-store.js';
import {
  createTestStore,
  postgresSql,
  stores,
  suiteOptions,
  type StoreKind,
  type TestStore,
} from '../support/stores.js';
import { storedEndpoint } from '../support/endpoint.js';

/** Each store's parts of a backup (the tables each kind covers) and the tables it leaves out. */
const PARTS: Record<
  StoreKind,
  {
    parts: Readonly<Record<RecordKind, { readonly tables: readonly string[] }>>;
    leftOut: Readonly<Record<string, string>>;
  }
> = {
  sqlite: { parts: SQLITE_BACKUP, leftOut: SQLITE_NOT_BACKED_UP },
  postgres: { parts: POSTGRES_BACKUP, leftOut: POSTGRES_NOT_BACKED_UP },
};

/**
 * Every table the store has. On SQLite, from sqlite_master, a virtual table's shadow tables
 * (plants_fts_data, …) counted as the virtual table they belong to; on PostgreSQL, from
 * information_schema.tables in the store's schema.
 */
async function tablesOf(db: TestStore): Promise<string[]> {
  if (db.kind === 'sqlite') {
    const sqlite = new Database(db.databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      const shadows = new Set(
        sqlite
          .prepare<[], { name: string }>("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'")
          .all()
          .map((t) => t.name),
      );
      const tables = sqlite.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
      return tables.map((t) => t.name).filter((name) => !shadows.has(name));
    } finally {
      sqlite.close();
    }
  }
  const schema = new URL(db.databaseUrl).searchParams.get('schema');
  const { rows } = await postgresSql(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = '${schema}'`,
  );
  return (rows as { name: string }[]).map((t) => t.name);
}

/** The tables of `tables` that no kind a backup holds covers and that are not left out on purpose. */
function unowned(kind: StoreKind, tables: string[]): string[] {
  const { parts, leftOut } = PARTS[kind];
  const owned = new Set([...BACKUP_RECORDS.flatMap((r) => parts[r.kind].tables), ...Object.keys(leftOut)]);
  return tables.filter((t) => !owned.has(t)).sort();
}

for (const kind of stores) {
  describe(`the whole store in a backup [${kind}]`, suiteOptions(kind), () => {
    const s = suiteStore(kind, 2);

    it('has no table that belongs to no kind a backup holds, unless it is named as left out', async () => {
      const tables = await tablesOf(s.db);
      assert.deepEqual(unowned(kind, tables), []);
      // And every table the lists name is one the store has: no list names a table long gone.
      const { parts, leftOut } = PARTS[kind];
      const named = [...Object.values(parts).flatMap((p) => p.tables), ...Object.keys(leftOut)];
      assert.deepEqual(
        named.filter((t) => !tables.includes(t)),
        [],
      );
    });

    it('finds a table that no kind covers, as a migration could add one', async () => {
      const other = createTestStore(kind);
      try {
        await (await openStore({ databaseUrl: other.databaseUrl, databasePoolSize: 1 })).store.close();
        if (kind === 'sqlite') {
          const sqlite = new Database(other.databaseUrl.slice('sqlite:'.length));
          sqlite.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)');
          sqlite.close();
        } else {
          await postgresSql(`CREATE TABLE ${new URL(other.databaseUrl).searchParams.get('schema')}.notes (id bigint)`);
        }
        assert.deepEqual(unowned(kind, await tablesOf(other)), ['notes']);
      } finally {
        await other.drop();
      }
    });

    it('reads every kind in a snapshot as of its moment: later writes are not seen', async () => {
      await s.store.plants.write({ kind: 'create', plant: { id: 1n, name: 'before' } });
      const snapshot = await s.store.openSnapshot();
      try {
        await s.store.plants.write({ kind: 'create', plant: { id: 2n, name: 'after' } });
        await s.store.webhooks.insertEndpoint(storedEndpoint('ep_TestEndpoint0001'));
        assert.equal(snapshot.schemaVersion, KNOWN_SCHEMA_VERSIONS[kind]);
        const seen: Record<string, unknown[]> = {};
        for (const [name, part] of Object.entries(snapshot.records)) {
          seen[name] = [];
          for await (const page of part.pages()) seen[name].push(...page);
        }
        assert.deepEqual(seen, { tokens: [], webhooks: [], plants: [{ id: 1n, name: 'before' }] });
      } finally {
        await snapshot.close();
      }
    });

    it('restores each kind through its part, whole or not at all, and writes no outbox event', async () => {
      const target = createTestStore(kind);
      const restored = (await openStore({ databaseUrl: target.databaseUrl, databasePoolSize: 1 })).store;
      try {
        const plants = [
          { id: -3n, name: 'Fiddle-leaf fig', tag: 'tree' },
          { id: 4n, name: 'Weeping fig' },
        ];
        await assert.rejects(
          restored.restoreInto(async ({ records }) => {
            await records.plants.insert(plants);
            throw new Error('refused half way');
          }),
          /refused half way/,
        );
        assert.equal(await restored.plants.count(), 0, 'nothing of a restore that failed');
        const restoredAt = BigInt(Date.now()) * 1000n;
        const counts = await restored.restoreInto(async ({ records }) => {
          const endpoint = (await s.store.webhooks.listEndpoints(0))[0]!.endpoint;
          assert.equal(await records.webhooks.insert([{ ...endpoint, secret: 'whsec_AAAA' }]), 1);
          assert.equal(await records.plants.insert(plants), 2);
          assert.equal(await records.plants.insert([{ id: 4n, name: 'again' }]), 0, 'an id taken');
          return { plants: await records.plants.count(), webhooks: await records.webhooks.count() };
        });
        assert.deepEqual(counts, { plants: 2, webhooks: 1 });
        assert.deepEqual(
          (await restored.plants.list({ search: searchWords('fig') }, 10)).map((p) => p.id),
          [-3n, 4n],
        );
        assert.equal(await restored.webhooks.countPendingDeliveries(), 0);
        // A backup carries no change log: the restored store starts a new one, past every
        // position of the store it came from, so a reader of that one is sent to list again.
        const log = await restored.changes.bounds();
        assert.ok(log.floor > (await s.store.changes.bounds()).current);
        assert.ok(log.floor >= restoredAt, 'the new log starts at the time of the restore, in microseconds');
        assert.equal(log.current, log.floor - 1n, 'the restore itself is no change');
        assert.equal(
          await restored.plants.write({ kind: 'create', plant: { id: 5n, name: 'new' } }).then((w) => w.position),
          log.floor,
        );
      } finally {
        await restored.close();
        await target.drop();
      }
    });
  });
}
