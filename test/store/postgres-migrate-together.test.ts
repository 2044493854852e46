// Instances that start together on a schema no one has made yet: one migrates it, the others wait
// for it and find it done, whatever the connections they wait on had looked up before (behind
// a pooler a connection is every client's).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/open-store.js';
import { postgresMigrations, runMigrations } from '../../src/store/postgres/migrations.js';
import { POSTGRES_URL, postgresSql, suiteOptions } from '../support/stores.js';

const urlWith = (schema: string) => {
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
};

const connect = async () => {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  return client;
};

describe('instances migrating a new schema together', suiteOptions('postgres'), () => {
  const made: string[] = [];
  const schemaName = () => {
    const name = `together_${process.pid}_${made.length}`;
    made.push(name);
    return name;
  };
  after(async () => {
    for (const schema of made) await postgresSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it('connections that migrated a schema before migrate a new one together: once, and each finds it done', async () => {
    // Each connection's backend has run every statement of the migrations once (the first
    // schema): what they read of the catalogue is cached, and nothing they do once granted the
    // lock reads it afresh, as a table lock would. What each found of the new schema before it
    // waited (missing: the lock's own statement looks it up, the search_path naming it) is what it
    // still believes once the first has created it. A pooler's server connections are such
    // backends whatever the instances do.
    const clients = await Promise.all(Array.from({ length: 6 }, connect));
    try {
      for (const schema of [schemaName(), schemaName()]) {
        const applied = await Promise.allSettled(
          clients.map((c) => runMigrations(c as unknown as pg.PoolClient, schema)),
        );
        const failed = applied.flatMap((a) => (a.status === 'rejected' ? [String(a.reason)] : []));
        assert.deepEqual(failed, [], schema);
        assert.deepEqual(
          applied.map((a) => (a.status === 'fulfilled' ? a.value : -1)).toSorted((a, b) => b - a),
          [postgresMigrations.length, 0, 0, 0, 0, 0],
        );
      }
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });

  it('six stores opened at once on a new schema: each opens, the schema migrated once', async () => {
    for (let round = 0; round < 5; round++) {
      const schema = schemaName();
      const opened = await Promise.allSettled(
        Array.from({ length: 6 }, () => openStore({ databaseUrl: urlWith(schema), databasePoolSize: 1 })),
      );
      const failed = opened.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
      for (const o of opened) if (o.status === 'fulfilled') await o.value.store.close();
      assert.deepEqual(failed, [], `round ${round}`);
      const applied = opened.map((o) => (o.status === 'fulfilled' ? o.value.migrated : -1));
      assert.deepEqual(
        applied.toSorted((a, b) => b - a),
        [postgresMigrations.length, 0, 0, 0, 0, 0],
      );
    }
  });
});
