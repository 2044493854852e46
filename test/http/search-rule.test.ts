// One search rule for both stores: a corpus of names in many scripts and forms, and searches for
// them, over HTTP on each store, through every way plants are written (POST, PUT, PATCH, DELETE,
// restore). The plants a search must find are derived from the domain's one rule (searchWords),
// and at the end both stores must have answered every search alike.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import { restoreStore } from '../../src/use-cases/restore.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { backupFile, header } from '../support/backup-file.js';
import { send } from '../support/http.js';
import { found, NAMES, searches } from '../support/search-corpus.js';
import { createTestStore, stores, suiteOptions, type StoreKind, type TestStore } from '../support/stores.js';

/** What each store answered, by step and search: both must be the same. */
const answers: Partial<Record<StoreKind, Record<string, unknown>>> = {};

for (const store of stores) {
  describe(`one search rule over HTTP [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    const plants = new Map<number, string>();
    const mine: Record<string, unknown> = (answers[store] = {});
    const call = (method: string, path: string, body?: unknown) =>
      send(server, {
        method,
        path,
        headers: {
          authorization: `Bearer ${server.token}`,
          ...(body !== undefined && {
            'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
          }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });

    /** Every search, against the rule's answer for `model`; recorded under `step`. */
    async function searchAll(app: TestApp, model: Map<number, string>, step: string): Promise<void> {
      server = app;
      const wrong: string[] = [];
      for (const q of searches) {
        const res = await call('GET', `/plants?limit=1000&q=${encodeURIComponent(q)}`);
        const got = res.status === 200 ? (res.json as { id: number }[]).map((p) => p.id) : res.status;
        mine[`${step} ${q}`] = got;
        const want = found(model, q);
        if (!isDeepStrictEqual(got, want)) wrong.push(`q=${q}: ${JSON.stringify(got)}, not ${JSON.stringify(want)}`);
      }
      assert.deepEqual(wrong, [], `${step}: ${wrong.length} of ${searches.length} searches`);
    }

    before(async () => {
      server = await buildTestApp({ store });
    });
    after(() => server.close());

    it('finds what the rule finds, for plants created with POST', async () => {
      for (const [i, name] of NAMES.entries()) {
        assert.equal((await call('POST', '/plants', { id: i + 1, name })).status, 200, name);
        plants.set(i + 1, name);
      }
      await searchAll(server, plants, 'created');
    });

    it('and after PUT and PATCH give plants other names, and DELETE takes some away', async () => {
      // A plant deleted and created again under its id has only its new name's words.
      for (const [i, name] of NAMES.entries()) {
        const id = i + 1;
        const next = NAMES[(i + 5) % NAMES.length]!;
        if (id % 5 === 0) {
          assert.equal((await call('DELETE', `/plants/${id}`)).status, 204);
          plants.delete(id);
          if (id % 10 === 0) {
            assert.equal((await call('POST', '/plants', { id, name: next })).status, 200, next);
            plants.set(id, next);
          }
        } else if (id % 2 === 0) {
          assert.equal((await call('PUT', `/plants/${id}`, { name: next })).status, 200, name);
          plants.set(id, next);
        } else if (id % 3 === 0) {
          assert.equal((await call('PATCH', `/plants/${id}`, { name: `${name} ${next}` })).status, 200, name);
          plants.set(id, `${name} ${next}`);
        }
      }
      await searchAll(server, plants, 'changed');
    });

    it('and in a store restored from a backup of them', async () => {
      const db: TestStore = createTestStore(store);
      try {
        const lines = [
          header({ store }),
          ...[...plants].sort(([a], [b]) => a - b).map(([id, name]) => JSON.stringify({ type: 'plant', id, name })),
        ];
        const target = (await openStore({ databaseUrl: db.databaseUrl, databasePoolSize: 1 })).store;
        try {
          await restoreStore(target, server.services.doc, Readable.from([backupFile(lines)]), {
            webhookAllowPrivate: false,
            webhookSecretKey: undefined,
          });
        } finally {
          await target.close();
        }
        const restored = await buildTestApp({ databaseUrl: db.databaseUrl });
        const own = server;
        try {
          await searchAll(restored, plants, 'restored');
        } finally {
          server = own;
          await restored.close();
        }
      } finally {
        await db.drop();
      }
    });
  });
}

describe('one search rule on both stores', () => {
  it('both stores answered every search the same', (t) => {
    const ran = (kind: StoreKind) => Object.keys(answers[kind] ?? []).length > 0;
    if (!ran('sqlite') || !ran('postgres')) return t.skip('a store did not run');
    assert.ok(Object.keys(answers.sqlite!).length >= 3 * searches.length);
    assert.deepEqual(answers.postgres, answers.sqlite);
  });
});
