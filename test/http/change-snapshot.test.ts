// GET /plants/changes?snapshot=true over a real socket, on both stores: every plant as of one
// position P, then `synced` at P, then the changes after it; applied strictly (a creation of a
// plant the client holds, or a change to one it does not, fails), the client's state equals the
// store's while writers ran during the snapshot; the filters, a reconnect and the refusals.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { importPlants } from '../../src/use-cases/export-import.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { openEventStream as openStream } from '../support/event-stream.js';
import { pollUntil } from '../support/poll.js';
import { snapshotUnderWriters } from '../support/snapshot-check.js';
import { stores, suiteOptions } from '../support/stores.js';

const SEEDED = 12_000;

for (const kind of stores) {
  describe(`snapshot=true: list and follow in one connection [${kind}]`, suiteOptions(kind), () => {
    let app: TestApp;
    let base: string;
    before(async () => {
      app = await buildTestApp({ store: kind });
      base = await app.listen();
      const lines = Array.from({ length: SEEDED }, (_, i) =>
        JSON.stringify({ id: i + 1, name: `p${i + 1}`, tag: i % 10 === 0 ? 'rare' : 'common' }),
      );
      await importPlants(app.services.store, app.services.doc, lines);
    });
    after(async () => app?.close());

    it('gives the plants as of P, synced at P, then every change after it: applied strictly, the store', async () => {
      const store = app.services.store;
      await snapshotUnderWriters({
        readFrom: base,
        writeTo: [base],
        token: app.token,
        seeded: SEEDED,
        newIds: 100_000,
        store,
        syncedWithinMs: 20_000,
      });
    });

    it('gives the same as JSON: one array of the plants as of P and synced, then the pages after P', async () => {
      const store = app.services.store;
      const o = { readFrom: base, writeTo: [base], token: app.token, seeded: SEEDED, newIds: 200_000, store };
      await snapshotUnderWriters({ ...o, syncedWithinMs: 20_000 }, 'json');
    });

    it('keeps to the filters, skips the snapshot on a reconnect, and refuses what it cannot do', async () => {
      const rare = await openStream(base, app.token, '/plants/changes?snapshot=true&tag=rare');
      assert.ok(await pollUntil(async () => rare.blocks().some((b) => b.event === 'synced'), 10_000));
      rare.close();
      const plants = rare
        .blocks()
        .filter((b) => b.event === 'plant')
        .map((b) => JSON.parse(b.data!) as { plant: { tag?: string } });
      assert.ok(plants.length > 0 && plants.every((p) => p.plant.tag === 'rare'), 'only rare plants');
      const synced = rare.blocks().find((b) => b.event === 'synced')!;
      const again = await openStream(base, app.token, '/plants/changes?snapshot=true&tag=rare', {
        'last-event-id': synced.id!,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      again.close();
      assert.deepEqual(again.blocks(), [], 'no snapshot: it follows on');
      const auth = { authorization: `Bearer ${app.token}` };
      for (const [path, accept, message] of [
        ['/plants/changes?snapshot=true&after=5', 'text/event-stream', /after=/],
        ['/plants/changes?snapshot=true&wait=1', 'application/json', /does not wait/],
        ['/plants/changes?snapshot=true&wait=1', 'text/event-stream', /does not wait/],
        ['/plants/changes?snapshot=yes', 'text/event-stream', /must be true or false/],
      ] as const) {
        const r = await app.inject({ path, headers: { ...auth, accept } });
        assert.equal(r.status, 400, path);
        assert.match((r.json as { message: string }).message, message);
      }
    });
  });
}

describe('snapshot=true across two instances [postgres]', suiteOptions('postgres'), () => {
  // PRODUCT.md §6 and issue 48: 100,000 plants, writers on both instances while one of them
  // reads the snapshot.
  const PLANTS = 100_000;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await buildTestApp({ store: 'postgres' });
    b = await buildTestApp({ databaseUrl: a.databaseUrl, token: a.token });
    const lines = Array.from({ length: PLANTS }, (_, i) => JSON.stringify({ id: i + 1, name: `p${i + 1}` }));
    await importPlants(a.services.store, a.services.doc, lines);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('gives the 100,000 plants as of P while both write, then every change once, in order: the store', async () => {
    const [baseA, baseB] = [await a.listen(), await b.listen()];
    await snapshotUnderWriters({
      readFrom: baseA,
      writeTo: [baseA, baseB],
      token: a.token,
      seeded: PLANTS,
      newIds: 1_000_000,
      store: a.services.store,
      syncedWithinMs: 60_000,
    });
  });
});
