// The check of `snapshot=true` that both the one-instance and the two-instance tests make: writers
// change the store (creations, renames, deletions, through every instance given) the whole time
// a snapshot is read from one; the client applies it strictly (a creation of a plant it holds, or
// a change to one it does not, fails) and its state, once every change has come, is the store's.
// Read as a stream, or as JSON: the snapshot's array, then the pages from its Link.
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
    // A write that changed nothing (a plant deleted already: 404) names the current position, not a change of its own.
    const p = r.headers['change-position'];
    if (p !== undefined && r.status < 300) positions.push(BigInt(p as string));
  }
}

interface Item {
  type: string;
  id: number;
  plant?: unknown;
  position?: number;
}

/** What a client read: the snapshot's plants, its position P, and the changes after P it then got. */
interface Read {
  plants: Item[];
  position: bigint;
  changes: { id: string; item: Item }[];
}

/** As a stream: the plant events, `synced`, then the events after it, until `last` has come. */
async function asStream(o: SnapshotUnderWriters, stopWriters: () => Promise<bigint>): Promise<Read> {
  const stream = await openEventStream(o.readFrom, o.token, '/plants/changes?snapshot=true');
  const synced = () => stream.blocks().findIndex((b) => b.event === 'synced');
  let last = 0n;
  try {
    assert.equal(stream.status, 200);
    assert.ok(await pollUntil(async () => synced() !== -1, o.syncedWithinMs), 'synced came');
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    last = await stopWriters();
  }
  const caughtUp = await pollUntil(async () => stream.blocks().at(-1)?.id === String(last), 5000);
  stream.close();
  assert.ok(caughtUp, 'every change came');
  const blocks = stream.blocks();
  const at = synced();
  for (const b of blocks.slice(0, at)) {
    assert.equal(b.event, 'plant');
    assert.equal(b.id, undefined, 'a plant of the snapshot has no id: line');
  }
  const position = BigInt(blocks[at]!.id!);
  assert.deepEqual(JSON.parse(blocks[at]!.data!), { type: 'synced', position: Number(position) });
  return {
    plants: blocks.slice(0, at).map((b) => JSON.parse(b.data!) as Item),
    position,
    changes: blocks.slice(at + 1).map((b) => ({ id: b.id!, item: JSON.parse(b.data!) as Item })),
  };
}

/** As JSON: one array of the plants and `synced`, then the pages its Link starts, until `last`. */
async function asJson(o: SnapshotUnderWriters, stopWriters: () => Promise<bigint>): Promise<Read> {
  const auth = { authorization: `Bearer ${o.token}` };
  let last = 0n;
  let answer;
  try {
    answer = await send(o.readFrom, { path: '/plants/changes?snapshot=true&limit=100', headers: auth });
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    last = await stopWriters();
  }
  assert.equal(answer.status, 200, answer.text);
  const items = answer.json as Item[];
  const syncedItem = items.at(-1)!;
  assert.equal(syncedItem.type, 'synced');
  const position = BigInt(syncedItem.position!);
  assert.equal(answer.headers['change-position'], String(position));
  const changes: Read['changes'] = [];
  let link = String(answer.headers.link);
  for (let page = 0; page < 1000; page++) {
    const path = /<([^>]+)>; rel="next"/.exec(link)![1]!;
    assert.match(path, /limit=100&after=/);
    const r = await send(o.readFrom, { path, headers: auth });
    const got = r.json as (Item & { position: number })[];
    changes.push(...got.map((item) => ({ id: String(item.position), item })));
    link = String(r.headers.link ?? '');
    if (got.length === 0 || BigInt(r.headers['change-position'] as string) >= last) break;
  }
  return { plants: items.slice(0, -1), position, changes };
}

export async function snapshotUnderWriters(o: SnapshotUnderWriters, as: 'stream' | 'json' = 'stream'): Promise<void> {
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
  const stopWriters = async () => {
    writing = false;
    await Promise.all(writers);
    return positions.reduce((a, b) => (b > a ? b : a), 0n);
  };
  await new Promise((resolve) => setTimeout(resolve, 50));
  const read = await (as === 'stream' ? asStream(o, stopWriters) : asJson(o, stopWriters));

  const state = new Map<string, string>();
  for (const item of read.plants) {
    assert.equal(item.type, 'plant');
    assert.ok(!state.has(String(item.id)), `plant ${item.id} twice`);
    state.set(String(item.id), JSON.stringify(item.plant));
  }
  const { position } = read;
  assert.ok(read.changes.length > 0, 'writes came after the snapshot');
  let previous = position;
  for (const { id, item: c } of read.changes) {
    assert.ok(BigInt(id) > previous, `in order, each once: ${id} after ${previous}`);
    previous = BigInt(id);
    const held = state.has(String(c.id));
    assert.equal(
      held,
      c.type !== 'created',
      `${c.type} of plant ${c.id} at ${id}: the snapshot was not as of ${position}`,
    );
    if (c.type === 'deleted') state.delete(String(c.id));
    else state.set(String(c.id), JSON.stringify(c.plant));
  }
  // Every change acknowledged after P came, once. (A write that changed nothing answers the
  // current position, another change's: counted once.)
  const acknowledged = new Set(positions.filter((p) => p > position)).size;
  assert.equal(read.changes.length, acknowledged, 'each change after synced once');
  const store = new Map<string, string>();
  const snapshot = await o.store.openSnapshot();
  for await (const page of snapshot.records.plants.pages()) {
    for (const p of page) store.set(String(p.id), plantJson(p));
  }
  await snapshot.close();
  assert.equal(state.size, store.size);
  for (const [id, plant] of store) assert.equal(state.get(id), plant, `plant ${id}`);
}
