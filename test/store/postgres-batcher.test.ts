// How the PostgreSQL store gathers concurrent writes (and reads by id) into batches, without a
// database: the items of one turn of the event loop share a batch, however many batches may be
// under way, and a batch that ends starts the next with everything that waited meanwhile.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Batcher } from '../../src/store/postgres/batcher.js';

/** A Batcher whose batches end when the test says so; it records the items of each. */
function recording(maxInFlight: number, maxBatch?: number) {
  const batches: number[][] = [];
  const ends: (() => void)[] = [];
  const batcher = new Batcher<number, number>(
    (items) => {
      batches.push(items);
      return new Promise((resolve) =>
        ends.push(() => resolve(items.map((value) => ({ status: 'fulfilled', value: value * 10 })))),
      );
    },
    maxInFlight,
    maxBatch,
  );
  return { batcher, batches, ends };
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
