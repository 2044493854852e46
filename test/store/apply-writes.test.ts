// The write path (src/store/write-path.ts) over an in-memory PlantTx: the steps it asks of a
// store, the race where another instance's creation takes an id between the read and the insert
// (on PostgreSQL it takes two instances and luck), the rounds of one id, and the changes it logs.
// The stores' own PlantTx are held to the same cases in write-path.test.ts.
import assert from 'node:assert/strict';
import { StoreUnavailableError } from '../../src/domain/errors.js';
import { describe, it } from 'node:test';
import type { PlantRecord } from '../../src/domain/plant.js';
import { etagOf, WritesRefused, type PlantWrite, type WriteOutcome } from '../../src/domain/plant-write.js';

/** The outcomes without their positions (the tests of positions look at them on their own). */
const kinds = (written: (WriteOutcome & { position: bigint })[]): WriteOutcome[] =>
  written.map(({ position: _, ...o }) => o as WriteOutcome);
import { applyWrites } from '../../src/store/write-path.js';
import { MemoryPlantTx } from '../support/memory-plant-tx.js';

const plant = (id: number, name: string, tag?: string): PlantRecord =>
  tag === undefined ? { id: BigInt(id), name } : { id: BigInt(id), name, tag };
const create = (p: PlantRecord): PlantWrite => ({ kind: 'create', plant: p });
const NOW = Date.UTC(2025, 0, 31, 12);

describe('the write path over an in-memory PlantTx', () => {
  describe('another instance creates the id between the read and the insert', () => {
    const cases: [string, PlantRecord, WriteOutcome][] = [
      ['the same plant: an identical retry', plant(7, 'Fern'), { kind: 'unchanged', plant: plant(7, 'Fern') }],
      [
        'another plant: a conflict with the plant that won',
        plant(7, 'Moss'),
        { kind: 'conflict', existing: plant(7, 'Moss') },
      ],
    ];
    for (const [what, won, outcome] of cases) {
      it(`${what}: this creation is decided again against it, and writes nothing`, async () => {
        const tx = new MemoryPlantTx();
        tx.rival(won);
        assert.deepEqual(kinds(await applyWrites([create(plant(7, 'Fern'))], tx, { now: NOW })), [outcome]);
        assert.deepEqual(tx.calls, ['read 7', 'read 7']);
        assert.deepEqual(tx.plants.get(7n), won);
      });
    }

    it('in a batch: only the lost creation is read again; the other writes are applied once', async () => {
      const tx = new MemoryPlantTx([plant(8, 'Aloe')]);
      tx.rival(plant(7, 'Moss'));
      const outcomes = await applyWrites(
        [create(plant(7, 'Fern')), { kind: 'replace', plant: plant(8, 'Aloe vera') }, create(plant(9, 'Ivy'))],
        tx,
        { now: NOW },
      );
      assert.deepEqual(kinds(outcomes), [
        { kind: 'conflict', existing: plant(7, 'Moss') },
        { kind: 'updated', plant: plant(8, 'Aloe vera') },
        { kind: 'created', plant: plant(9, 'Ivy') },
      ]);
      assert.deepEqual(tx.calls, ['read 7,8,9', 'update 8', 'read 7', 'log plant.updated 8', 'log plant.created 9']);
    });

    it('created and deleted again: in at the third attempt; never in after three, the store is busy (503)', async () => {
      const tx = new MemoryPlantTx();
      tx.rival(plant(7, 'Moss'), { wins: 2, deletes: true });
      assert.deepEqual(kinds(await applyWrites([create(plant(7, 'Fern'))], tx, { now: NOW })), [
        { kind: 'created', plant: plant(7, 'Fern') },
      ]);
      assert.deepEqual(tx.calls, ['read 7', 'read 7', 'read 7', 'log plant.created 7']);

      const again = new MemoryPlantTx();
      again.rival(plant(7, 'Moss'), { wins: 3, deletes: true });
      await assert.rejects(
        applyWrites([create(plant(7, 'Fern'))], again, { now: NOW }),
        (err: unknown) =>
          err instanceof StoreUnavailableError && err.message === 'the store is busy with other writes; retry later',
      );
      assert.deepEqual(again.calls, ['read 7', 'read 7', 'read 7']);
    });
  });

  it('writes of one id see each other, in rounds of distinct ids, in order', async () => {
    const tx = new MemoryPlantTx();
    const outcomes = await applyWrites(
      [
        create(plant(1, 'a')),
        { kind: 'patch', id: 1n, patch: { name: 'b' } },
        create(plant(2, 'c')),
        { kind: 'delete', id: 1n },
        create(plant(1, 'd')),
        create(plant(2, 'c')),
      ],
      tx,
      { now: NOW },
    );
    assert.deepEqual(
      outcomes.map((o) => o.kind),
      ['created', 'updated', 'created', 'deleted', 'created', 'unchanged'],
    );
    // Every change is logged in one last step, in the order of the writes (not of the rounds).
    assert.deepEqual(tx.calls, [
      'read 1,2',
      'read 1,2',
      'update 1',
      'read 1',
      'delete 1',
      'read 1',
      'log plant.created 1',
      'log plant.updated 1',
      'log plant.created 2',
      'log plant.deleted 1',
      'log plant.created 1',
    ]);
    // Each change its own position, in that order; a write that changed nothing, the log's
    // position once the batch is in.
    assert.deepEqual(
      outcomes.map((o) => o.position),
      [101n, 102n, 103n, 104n, 105n, 105n],
    );
    assert.deepEqual([...tx.plants.values()], [plant(2, 'c'), plant(1, 'd')]);
  });

  it('a change for each write that changes something, none for one that does not', async () => {
    const tx = new MemoryPlantTx([plant(1, 'a', 't'), plant(2, 'b'), plant(3, 'c')]);
    const outcomes = await applyWrites(
      [
        create(plant(1, 'a', 't')),
        create(plant(2, 'other')),
        { kind: 'replace', plant: plant(3, 'c') },
        { kind: 'patch', id: 4n, patch: { name: 'x' } },
        { kind: 'delete', id: 3n, conditions: { ifMatch: [etagOf(plant(3, 'old'))] } },
        { kind: 'patch', id: 1n, patch: { tag: null } },
        { kind: 'delete', id: 2n, conditions: { ifMatch: [etagOf(plant(2, 'b'))] } },
        create(plant(5, 'e', '')),
      ],
      tx,
      { now: NOW },
    );
    assert.deepEqual(
      outcomes.map((o) => o.kind),
      ['unchanged', 'conflict', 'unchanged', 'not-found', 'precondition-failed', 'updated', 'deleted', 'created'],
    );
    assert.deepEqual(tx.calls, [
      'read 1,2,3,4,5',
      'read 3,1,2',
      'update 1',
      'delete 2',
      'log plant.updated 1',
      'log plant.deleted 2',
      'log plant.created 5',
    ]);
    // The update took the tag away: the change says which it had, for the feed's tag filter.
    assert.deepEqual(
      tx.events.map((e) => [e.type, e.body, e.tag, e.oldTag, e.createdAt]),
      [
        ['plant.updated', '{"id":1,"name":"a"}', null, 't', NOW],
        ['plant.deleted', '{"id":2,"name":"b"}', null, null, NOW],
        ['plant.created', '{"id":5,"name":"e","tag":""}', '', null, NOW],
      ],
    );
    assert.deepEqual(
      outcomes.map((o) => o.position),
      [103n, 103n, 103n, 103n, 103n, 101n, 102n, 103n],
    );
  });

  describe('all or nothing (a batch)', () => {
    it('applies every write when none is refused, as without the option', async () => {
      const tx = new MemoryPlantTx([plant(2, 'b')]);
      const writes: PlantWrite[] = [
        create(plant(1, 'a')),
        { kind: 'patch', id: 1n, patch: { tag: 't' } },
        create(plant(2, 'b')),
      ];
      const outcomes = await applyWrites(writes, tx, { allOrNothing: true, now: NOW });
      assert.deepEqual(
        outcomes.map((o) => [o.kind, o.position]),
        [
          ['created', 101n],
          ['updated', 102n],
          ['unchanged', 102n],
        ],
      );
    });

    it('throws the first refusal in the order of the writes, before logging anything', async () => {
      const tx = new MemoryPlantTx([plant(3, 'c')]);
      // Write 1 is in the second round and write 2 in the first: one after the other, write 1
      // (If-Match on a plant write 0 just created) would have failed first.
      const writes: PlantWrite[] = [
        create(plant(1, 'a')),
        { kind: 'patch', id: 1n, patch: { name: 'b' }, conditions: { ifMatch: [etagOf(plant(1, 'old'))] } },
        { kind: 'delete', id: 9n },
        { kind: 'delete', id: 3n },
      ];
      await assert.rejects(applyWrites(writes, tx, { allOrNothing: true, now: NOW }), (err: unknown) => {
        assert.ok(err instanceof WritesRefused);
        assert.equal(err.index, 1);
        assert.equal(err.outcome.kind, 'precondition-failed');
        return true;
      });
      assert.ok(!tx.calls.some((c) => c.startsWith('log')), tx.calls.join('; '));
    });

    it('a refusal by the last write alone is thrown too', async () => {
      const tx = new MemoryPlantTx([plant(5, 'e')]);
      const writes: PlantWrite[] = [create(plant(1, 'a')), create(plant(2, 'b')), create(plant(5, 'other'))];
      await assert.rejects(applyWrites(writes, tx, { allOrNothing: true, now: NOW }), (err: unknown) => {
        assert.ok(err instanceof WritesRefused);
        assert.deepEqual([err.index, err.outcome.kind], [2, 'conflict']);
        return true;
      });
      assert.deepEqual(tx.events, []);
    });
  });
});
