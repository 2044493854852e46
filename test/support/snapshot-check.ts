// The check of `snapshot=true` that both the one-instance and the two-instance tests make: writers
// change the store (creations, renames, deletions, through every instance given) the whole time
// a snapshot is read from one; the client applies it strictly (a creation of a plant it holds, or
// a change to one it does not, fails) and its state, once every change has come, is the store's.
import assert from 'node:assert/strict';
import { plantJson } from '../../src/domain/plant.js';
import type { Store } from '../../src/store/store.js';
import { openEventStream } from './event-stream.js';
import { postPlant, send } from './http.js';
import { pollUntil } from './poll.js';

export interface SnapshotUnderWriters {
  /** The instance the snapshot is read from. */
  readFrom: string;
  /** The instances written through, three writers each. */
  writeTo: string[];
  token: string;
  /** Plants 1..seeded are in the store; writers create past `newIds`. */
  seeded: number;
  newIds: number;
  store: Store;
  /** How long the snapshot may take to reach `synced`. */
  syncedWithinMs: number;
}

/** Every change a writer made, until `stop` says to end: its positions go to `positions`. */
async function write(
  base: string,
  o: SnapshotUnderWriters,
  next: () => number,
  stop: () => boolean,
  positions: bigint[],
) {
  const headers = { authorization: `Bearer ${o.token}` };
  while (!stop()) {
    const i = next();
    const r =
      i % 3 === 0
        ? await postPlant(base, o.token, JSON.stringify({ id: o.newIds + i, name: 'new' }))
        : i % 3 === 1
          ? await send(base, {
              method: 'PUT',
              path: `/plants/${1 + ((i * 7) % o.seeded)}`,
              headers: { ...headers, 'content-type': 'application/json' },
              body: `{"name":"renamed ${i}"}`,
            })
          : await send(base, { method: 'DELETE', path: `/plants/${o.seeded - i}`, headers });
    const p = r.headers['change-position'];
    if (p !== undefined) positions.push(BigInt(p as string));
  }
}

export async function snapshotUnderWriters(o: SnapshotUnderWriters): Promise<void> {
  let writing = true;
  let n = 0;
  const positions: bigint[] = [];
  const writers = o.writeTo.flatMap((base) =>
    [1, 2, 3].map(() =>
      write(
        base,
        o,
        () => n++,
        () => !writing,
        positions,
      ),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  const stream = await openEventStream(o.readFrom, o.token, '/plants/changes?snapshot=true');
  const synced = () => stream.blocks().findIndex((b) => b.event === 'synced');
  try {
    assert.equal(stream.status, 200);
    assert.ok(await pollUntil(async () => synced() !== -1, o.syncedWithinMs), 'synced came');
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    writing = false;
    await Promise.all(writers);
  }
  const last = positions.reduce((a, b) => (b > a ? b : a), 0n);
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
  let previous = position;
  for (const b of after) {
    const c = JSON.parse(b.data!) as { type: string; id: number; plant?: unknown; position: number };
    assert.ok(BigInt(b.id!) > previous, `in order, each once: ${b.id} after ${previous}`);
    previous = BigInt(b.id!);
    const held = state.has(String(c.id));
    assert.equal(
      held,
      c.type !== 'created',
      `${c.type} of plant ${c.id} at ${b.id}: the snapshot was not as of ${position}`,
    );
    if (c.type === 'deleted') state.delete(String(c.id));
    else state.set(String(c.id), JSON.stringify(c.plant));
  }
  // Every change acknowledged after P came, once.
  const acknowledged = positions.filter((p) => p > position).length;
  assert.equal(after.length, acknowledged, 'each change after synced once');
  const store = new Map<string, string>();
  const snapshot = await o.store.openSnapshot();
  for await (const page of snapshot.records.plants.pages()) {
    for (const p of page) store.set(String(p.id), plantJson(p));
  }
  await snapshot.close();
  assert.equal(state.size, store.size);
  for (const [id, plant] of store) assert.equal(state.get(id), plant, `plant ${id}`);
}
