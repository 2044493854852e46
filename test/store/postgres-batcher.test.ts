// How the PostgreSQL store gathers concurrent writes (and reads by id) into batches, without a
// database: the items of one turn of the event loop share a batch, however many batches may be
// under way, and a batch that ends starts the next with everything that waited meanwhile.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Batcher } from '../../src/store/postgres/batcher.js';

class Late extends Error {}

/** A Batcher whose batches end when the test says so; it records the items and time-out of each. */
function recording(maxInFlight: number, maxBatch?: number, budgetMs = 60_000) {
  const batches: number[][] = [];
  const timeouts: number[] = [];
  const ends: (() => void)[] = [];
  const batcher = new Batcher<number, number>(
    (items, timeoutMs) => {
      batches.push(items);
      timeouts.push(timeoutMs);
      return new Promise((resolve) =>
        ends.push(() => resolve(items.map((value) => ({ status: 'fulfilled', value: value * 10 })))),
      );
    },
    maxInFlight,
    { ms: budgetMs, late: () => new Late('late') },
    maxBatch,
  );
  return { batcher, batches, timeouts, ends };
}

/** How each of `answers` settled, and when (ms from `since`). */
function settled(answers: Promise<number>[], since: number) {
  return Promise.all(
    answers.map((a) =>
      a.then(
        (value) => ({ value, at: Date.now() - since }),
        (err: unknown) => ({ value: err instanceof Late ? 'late' : String(err), at: Date.now() - since }),
      ),
    ),
  );
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the write batcher', () => {
  it('gives the items of one turn one batch, even when two batches may be under way', async () => {
    const { batcher, batches, ends } = recording(2);
    const answers = [1, 2, 3, 4, 5].map((i) => batcher.submit(i));
    await turn();
    assert.deepEqual(batches, [[1, 2, 3, 4, 5]]);

    // The next turn's items go on the second connection; later ones wait for a batch to end.
    const more = [6, 7].map((i) => batcher.submit(i));
    await turn();
    const waiting = [8, 9].map((i) => batcher.submit(i));
    await turn();
    assert.deepEqual(batches, [
      [1, 2, 3, 4, 5],
      [6, 7],
    ]);
    assert.equal(batcher.waiting, 2);

    ends.shift()!();
    assert.deepEqual(await Promise.all(answers), [10, 20, 30, 40, 50]);
    assert.deepEqual(batches.at(-1), [8, 9]);
    for (const end of ends.splice(0)) end();
    assert.deepEqual(await Promise.all([...more, ...waiting]), [60, 70, 80, 90]);
  });

  it('splits a turn larger than a batch over the batches it may start', async () => {
    const { batcher, batches, ends } = recording(2, 3);
    const answers = [1, 2, 3, 4, 5, 6, 7].map((i) => batcher.submit(i));
    await turn();
    assert.deepEqual(batches, [
      [1, 2, 3],
      [4, 5, 6],
    ]);
    ends.shift()!();
    await turn();
    assert.deepEqual(batches.at(-1), [7]);
    for (const end of ends.splice(0)) end();
    assert.equal((await Promise.all(answers)).length, 7);
  });
});

describe('the batcher keeps each item within its budget, its wait in the queue included', () => {
  it('a batch is given the time left to its earliest deadline, and is answered late past it', async () => {
    const { batcher, timeouts } = recording(1, undefined, 300);
    const since = Date.now();
    const answers = [batcher.submit(1), batcher.submit(2)];
    await turn();
    assert.ok(timeouts[0]! > 250 && timeouts[0]! <= 300, `time-out ${timeouts[0]}`);
    // The batch never ends (a lock it waits for): its items are answered at their deadline.
    const outcomes = await settled(answers, since);
    for (const o of outcomes) {
      assert.equal(o.value, 'late');
      assert.ok(o.at >= 290 && o.at < 1000, `answered after ${o.at} ms`);
    }
  });

  it('an item queued behind a busy batch is answered late at its own deadline, never run', async () => {
    const { batcher, batches } = recording(1, undefined, 300);
    const since = Date.now();
    const first = batcher.submit(1);
    await turn();
    await new Promise((r) => setTimeout(r, 150));
    const queued = batcher.submit(2);
    // The first batch never ends. Before, the second waited for it, then for its own time-out.
    const [a, b] = await settled([first, queued], since);
    assert.equal(a!.value, 'late');
    assert.equal(b!.value, 'late');
    assert.ok(b!.at >= 440 && b!.at < 1000, `the queued item was answered after ${b!.at} ms`);
    assert.equal(batcher.waiting, 0);
    assert.deepEqual(batches, [[1]], 'the expired item never reached the store');
  });

  it('a batch that frees up after a queued item expired starts without it', async () => {
    const { batcher, batches, ends, timeouts } = recording(1, undefined, 200);
    const first = settled([batcher.submit(1)], Date.now());
    await turn();
    const queued = settled([batcher.submit(2)], Date.now());
    await new Promise((r) => setTimeout(r, 250));
    const fresh = batcher.submit(3);
    ends.shift()!();
    await first;
    assert.equal((await queued)[0]!.value, 'late');
    await turn();
    assert.deepEqual(batches, [[1], [3]]);
    assert.ok(timeouts[1]! > 150, `the fresh item's batch had ${timeouts[1]} ms`);
    ends.shift()!();
    assert.equal(await fresh, 30);
  });
});
