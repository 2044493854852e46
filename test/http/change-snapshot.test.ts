// GET /plants/changes?snapshot=true over a real socket, on both stores: every plant as of one
// position P, then `synced` at P, then the changes after it; applied strictly (a creation of a
// plant the client holds, or a change to one it does not, fails), the client's state equals the
// store's while writers ran during the snapshot; the filters, a reconnect and the refusals.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { plantJson } from '../../src/domain/plant.js';
import { importPlants } from '../../src/use-cases/export-import.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant, send } from '../support/http.js';
import { openEventStream as openStream } from '../support/event-stream.js';
import { pollUntil } from '../support/poll.js';
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
      // Writers change the store the whole time the snapshot is read: creations, renames, deletions.
      let writing = true;
      let last = 0n;
      let n = 0;
      const writer = async () => {
        while (writing) {
          const i = n++;
          const r =
            i % 3 === 0
              ? await postPlant(base, app.token, JSON.stringify({ id: 100_000 + i, name: 'new' }))
              : i % 3 === 1
                ? await send(base, {
                    method: 'PUT',
                    path: `/plants/${1 + ((i * 7) % SEEDED)}`,
                    headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' },
                    body: `{"name":"renamed ${i}"}`,
                  })
                : await send(base, {
                    method: 'DELETE',
                    path: `/plants/${SEEDED - i}`,
                    headers: { authorization: `Bearer ${app.token}` },
                  });
          const p = r.headers['change-position'];
          if (p !== undefined && BigInt(p as string) > last) last = BigInt(p as string);
        }
      };
      const writers = [writer(), writer(), writer()];
      await new Promise((resolve) => setTimeout(resolve, 50));
      const stream = await openStream(base, app.token, '/plants/changes?snapshot=true');
      const synced = () => stream.blocks().findIndex((b) => b.event === 'synced');
      try {
        assert.equal(stream.status, 200);
        assert.ok(await pollUntil(async () => synced() !== -1, 20_000), 'synced came');
        await new Promise((resolve) => setTimeout(resolve, 200));
      } finally {
        writing = false;
        await Promise.all(writers);
      }
      const caughtUp = await pollUntil(async () => stream.blocks().at(-1)?.id === String(last), 5000);
      stream.close();
      assert.ok(caughtUp, 'every change came');

      const blocks = stream.blocks();
      const at = synced();
      const state = new Map<string, string>();
      for (const b of blocks.slice(0, at)) {
        assert.equal(b.event, 'plant');
        assert.equal(b.id, undefined, 'a plant of the snapshot has no id: line');
        const item = JSON.parse(b.data!) as { type: string; id: number; plant: unknown };
        assert.equal(item.type, 'plant');
        assert.ok(!state.has(String(item.id)), `plant ${item.id} twice`);
        state.set(String(item.id), JSON.stringify(item.plant));
      }
      const position = BigInt(blocks[at]!.id!);
      assert.deepEqual(JSON.parse(blocks[at]!.data!), { type: 'synced', position: Number(position) });
      const after = blocks.slice(at + 1);
      assert.ok(after.length > 0, 'writes came after the snapshot');
      for (const b of after) {
        const c = JSON.parse(b.data!) as { type: string; id: number; plant?: unknown; position: number };
        assert.ok(BigInt(b.id!) > position);
        const held = state.has(String(c.id));
        assert.equal(
          held,
          c.type !== 'created',
          `${c.type} of plant ${c.id} at ${b.id}: the snapshot was not as of ${position}`,
        );
        if (c.type === 'deleted') state.delete(String(c.id));
        else state.set(String(c.id), JSON.stringify(c.plant));
      }
      const store = new Map<string, string>();
      const snapshot = await app.services.store.openSnapshot();
      for await (const page of snapshot.records.plants.pages()) {
        for (const p of page) store.set(String(p.id), plantJson(p));
      }
      await snapshot.close();
      assert.equal(state.size, store.size);
      for (const [id, plant] of store) assert.equal(state.get(id), plant, `plant ${id}`);
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
        ['/plants/changes?snapshot=true', 'application/json', /is for a stream/],
        ['/plants/changes?snapshot=yes', 'text/event-stream', /must be true or false/],
      ] as const) {
        const r = await app.inject({ path, headers: { ...auth, accept } });
        assert.equal(r.status, 400, path);
        assert.match((r.json as { message: string }).message, message);
      }
    });
  });
}
