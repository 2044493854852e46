// The plants' use-cases on the memory store (support/memory-store.ts): what each answers, which
// domain error a refusal becomes, what it leaves in the store and in the change log. No database:
// the whole file runs in a few milliseconds. The same behaviour end to end, through HTTP and on
// both stores: test/http/plants-*.test.ts, batch.test.ts, plant-filters.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ConflictError,
  InvalidInputError,
  NotFoundError,
  PreconditionFailedError,
  StoreUnavailableError,
} from '../../src/domain/errors.js';
import { etagOf } from '../../src/domain/plant-write.js';
import { loadDocument } from '../../src/openapi/document.js';
import { deletePlant, patchPlant, replacePlant } from '../../src/use-cases/change-plant.js';
import { createPlant } from '../../src/use-cases/create-plant.js';
import { exportPlants, importPlants, importProblems } from '../../src/use-cases/export-import.js';
import { getPlant, listPlants } from '../../src/use-cases/read-plants.js';
import { writeBatch } from '../../src/use-cases/write-batch.js';
import { MemoryStore } from '../support/memory-store.js';

/** The change log from its start, as `type id body`. */
async function logOf(store: MemoryStore): Promise<string[]> {
  const { current } = await store.changes.bounds();
  const { changes } = await store.changes.read(0n, current, 1000, {});
  return changes.map((c) => `${c.type} ${c.id} ${c.body}`);
}

const names = (plants: { id: bigint; name: string }[]) => plants.map((p) => `${p.id}:${p.name}`);

describe('creating a plant', () => {
  it('stores it, logs one change and answers its position', async () => {
    const store = new MemoryStore();
    const created = await createPlant(store, { id: 9223372036854775807n, name: 'Fern', tag: 'green' });
    assert.deepEqual(created.plant, { id: 9223372036854775807n, name: 'Fern', tag: 'green' });
    assert.equal(created.position, (await store.changes.bounds()).current);
    assert.deepEqual(await logOf(store), [
      'created 9223372036854775807 {"id":9223372036854775807,"name":"Fern","tag":"green"}',
    ]);
  });

  it('answers an identical retry like the creation, and logs nothing more', async () => {
    const store = new MemoryStore();
    const first = await createPlant(store, { id: 1, name: 'Fern' });
    const again = await createPlant(store, { id: 1, name: 'Fern' });
    assert.deepEqual(again, first);
    assert.equal((await logOf(store)).length, 1);
  });

  it('refuses another plant under a taken id with a conflict, and leaves the first', async () => {
    const store = new MemoryStore();
    await createPlant(store, { id: 1, name: 'Fern' });
    await assert.rejects(createPlant(store, { id: 1, name: 'Fern', tag: 'x' }), ConflictError);
    assert.deepEqual(await store.plants.get(1n), { id: 1n, name: 'Fern' });
    assert.equal((await logOf(store)).length, 1);
  });

  it('passes an outage on as the store said it', async () => {
    const store = new MemoryStore();
    store.breakWith();
    await assert.rejects(createPlant(store, { id: 1, name: 'Fern' }), StoreUnavailableError);
  });
});

describe('replacing, patching and deleting a plant', () => {
  const seeded = async () => {
    const store = new MemoryStore();
    await createPlant(store, { id: 1, name: 'Fern', tag: 'green' });
    return store;
  };

  it('replaces name and tag, removing a tag the body leaves out', async () => {
    const store = await seeded();
    const { plant, position } = await replacePlant(store, 1n, { name: 'Moss' });
    assert.deepEqual(plant, { id: 1n, name: 'Moss' });
    assert.equal(position, (await store.changes.bounds()).current);
    assert.deepEqual((await logOf(store)).at(-1), 'updated 1 {"id":1,"name":"Moss"}');
    const change = (await store.changes.read(0n, position, 10, { tags: ['green'] })).changes;
    assert.equal(change.length, 2, 'the untagging is found by the tag it had');
  });

  it('refuses a body naming another id before asking the store', async () => {
    const store = await seeded();
    const calls = store.calls.length;
    await assert.rejects(replacePlant(store, 1n, { id: 2, name: 'Moss' }), InvalidInputError);
    await assert.rejects(patchPlant(store, 1n, { id: 2n, name: 'Moss' }), InvalidInputError);
    assert.equal(store.calls.length, calls);
  });

  it('answers a missing plant as not found, whatever the write', async () => {
    const store = new MemoryStore();
    await assert.rejects(replacePlant(store, 5n, { name: 'x' }), NotFoundError);
    await assert.rejects(patchPlant(store, 5n, { name: 'x' }), NotFoundError);
    await assert.rejects(deletePlant(store, 5n), NotFoundError);
    assert.deepEqual(await logOf(store), []);
  });

  it('patches only what the patch names; tag null removes the tag; an empty change is no write', async () => {
    const store = await seeded();
    assert.deepEqual((await patchPlant(store, 1n, { name: 'Moss' })).plant, { id: 1n, name: 'Moss', tag: 'green' });
    assert.deepEqual((await patchPlant(store, 1n, { tag: null })).plant, { id: 1n, name: 'Moss' });
    const before = await logOf(store);
    const same = await patchPlant(store, 1n, { name: 'Moss' });
    assert.equal(same.position, (await store.changes.bounds()).current);
    assert.deepEqual(await logOf(store), before, 'a patch that changes nothing logs nothing');
  });

  it('keeps If-Match: the current ETag passes, another fails with 412 and changes nothing', async () => {
    const store = await seeded();
    const etag = etagOf((await store.plants.get(1n))!);
    await assert.rejects(replacePlant(store, 1n, { name: 'Moss' }, { ifMatch: ['"other"'] }), PreconditionFailedError);
    assert.equal((await store.plants.get(1n))!.name, 'Fern');
    await replacePlant(store, 1n, { name: 'Moss' }, { ifMatch: [etag] });
    await assert.rejects(deletePlant(store, 1n, { ifMatch: [etag] }), PreconditionFailedError, 'the ETag changed');
  });

  it('deletes the plant, answers it as it was, and the id can be created again', async () => {
    const store = await seeded();
    const { plant } = await deletePlant(store, 1n);
    assert.deepEqual(plant, { id: 1n, name: 'Fern', tag: 'green' });
    assert.equal(await store.plants.get(1n), undefined);
    await createPlant(store, { id: 1, name: 'Other' });
    assert.deepEqual(
      (await logOf(store)).map((l) => l.split(' ')[0]),
      ['created', 'deleted', 'created'],
    );
  });
});

describe('a batch', () => {
  it('applies every operation in order, each seeing the ones before, in ascending positions', async () => {
    const store = new MemoryStore();
    const { results, position } = await writeBatch(store, {
      operations: [
        { op: 'create', plant: { id: 1, name: 'a' } },
        { op: 'patch', id: 1, patch: { tag: 't' } },
        { op: 'create', plant: { id: 2, name: 'b' } },
        { op: 'delete', id: 2 },
      ],
    });
    assert.deepEqual(
      results.map((r) => [r.plant.name, r.plant.tag, r.deleted]),
      [
        ['a', undefined, false],
        ['a', 't', false],
        ['b', undefined, false],
        ['b', undefined, true],
      ],
    );
    const { changes } = await store.changes.read(0n, position, 10, {});
    assert.deepEqual(
      changes.map((c) => `${c.type} ${c.id}`),
      ['created 1', 'updated 1', 'created 2', 'deleted 2'],
    );
    assert.equal(changes.at(-1)!.position, position);
    assert.equal(store.writeStats().commits, 1, 'one transaction');
  });

  it('applies nothing when one operation is refused, and names it by index', async () => {
    const store = new MemoryStore();
    await createPlant(store, { id: 1, name: 'a' });
    const before = await logOf(store);
    await assert.rejects(
      writeBatch(store, {
        operations: [
          { op: 'create', plant: { id: 2, name: 'b' } },
          { op: 'replace', id: 1, plant: { name: 'c' }, ifMatch: '"stale"' },
          { op: 'delete', id: 3 },
        ],
      }),
      (err: Error) => err instanceof PreconditionFailedError && err.message.startsWith('operations[1]: '),
    );
    assert.equal(await store.plants.get(2n), undefined, 'the creation before it was rolled back');
    assert.deepEqual(await logOf(store), before);
    await assert.rejects(
      writeBatch(store, { operations: [{ op: 'delete', id: 3 }] }),
      (err: Error) => err instanceof NotFoundError && /^operations\[0\]: /.test(err.message),
    );
  });

  it('refuses a weak If-Match tag as a single write refuses it, and an id the operation does not name', async () => {
    const store = new MemoryStore();
    await createPlant(store, { id: 1, name: 'a' });
    const etag = etagOf((await store.plants.get(1n))!);
    await assert.rejects(
      writeBatch(store, { operations: [{ op: 'delete', id: 1, ifMatch: `W/${etag}` }] }),
      PreconditionFailedError,
    );
    await assert.rejects(
      writeBatch(store, { operations: [{ op: 'patch', id: 1, patch: { id: 2, name: 'x' } }] }),
      (err: Error) =>
        err instanceof InvalidInputError && err.message === 'operations[0]: patch.id (2) must equal id (1)',
    );
    await writeBatch(store, { operations: [{ op: 'delete', id: 1, ifMatch: etag }] });
    assert.equal(await store.plants.get(1n), undefined);
  });
});

describe('reading plants', () => {
  const garden = async () => {
    const store = new MemoryStore();
    await writeBatch(store, {
      operations: [
        { op: 'create', plant: { id: 3, name: 'Boston fern', tag: 'fern' } },
        { op: 'create', plant: { id: 1, name: 'Maidenhair Fern', tag: 'fern' } },
        { op: 'create', plant: { id: 2, name: 'Moss', tag: 'moss' } },
        { op: 'create', plant: { id: 4, name: 'Crème fern' } },
      ],
    });
    return store;
  };

  it('pages by id, with the cursor of the next page only when one follows', async () => {
    const store = await garden();
    const first = await listPlants(store, { limit: 3 });
    assert.deepEqual(names(first.plants), ['1:Maidenhair Fern', '2:Moss', '3:Boston fern']);
    assert.equal(first.nextAfter, 3n);
    const second = await listPlants(store, { limit: 3, after: first.nextAfter });
    assert.deepEqual(names(second.plants), ['4:Crème fern']);
    assert.equal(second.nextAfter, undefined);
    assert.equal(first.position, (await store.changes.bounds()).current);
  });

  it('filters by any of the tags and by every word of q, folded as names are', async () => {
    const store = await garden();
    assert.deepEqual(names((await listPlants(store, { limit: 10, tag: ['moss', 'none'] })).plants), ['2:Moss']);
    assert.deepEqual(names((await listPlants(store, { limit: 10, q: 'FERN creme' })).plants), ['4:Crème fern']);
    assert.deepEqual(names((await listPlants(store, { limit: 10, q: 'fern', tag: ['fern'] })).plants), [
      '1:Maidenhair Fern',
      '3:Boston fern',
    ]);
  });

  it('refuses a q with no word before reading', async () => {
    const store = await garden();
    const calls = store.calls.length;
    await assert.rejects(listPlants(store, { limit: 10, q: '¿ !' }), InvalidInputError);
    assert.equal(store.calls.length, calls);
  });

  it('reads the position before the page', async () => {
    const store = await garden();
    await listPlants(store, { limit: 10 });
    assert.deepEqual(store.calls.slice(-3), ['reads', 'changes.bounds', 'plants.list']);
  });

  it('reads one plant with its ETag: not found, If-Match and If-None-Match', async () => {
    const store = await garden();
    await assert.rejects(getPlant(store, 9n, { ifMatch: '*' }), NotFoundError, 'a missing plant ignores conditions');
    const read = await getPlant(store, 2n);
    assert.equal(read.etag, etagOf({ id: 2n, name: 'Moss', tag: 'moss' }));
    assert.equal(read.notModified, false);
    assert.equal((await getPlant(store, 2n, { ifNoneMatch: [read.etag] })).notModified, true);
    await assert.rejects(getPlant(store, 2n, { ifMatch: ['"x"'] }), PreconditionFailedError);
  });
});

describe('import and export', () => {
  it('creates new plants, skips identical ones, reports conflicts and invalid lines, and logs only creations', async () => {
    const store = new MemoryStore();
    await createPlant(store, { id: 1, name: 'Fern' });
    await createPlant(store, { id: 2, name: 'Moss' });
    const report = await importPlants(store, loadDocument(), [
      '{"id":1,"name":"Fern"}',
      '{"id":2,"name":"Not moss"}',
      '',
      '{"id":3,"name":"Ivy","tag":"climber"}',
      '{"id":4}',
      '{"id":9223372036854775807,"name":"max"}',
    ]);
    assert.deepEqual([report.created, report.skipped], [2, 1]);
    assert.deepEqual(
      importProblems(report).map((p) => p.line),
      [2, 5],
    );
    assert.equal(store.calls.filter((c) => c === 'plants.settleAfterImport').length, 1);
    assert.deepEqual(
      (await logOf(store)).map((l) => l.split(' ').slice(0, 2).join(' ')),
      ['created 1', 'created 2', 'created 3', 'created 9223372036854775807'],
    );
    let exported = '';
    for await (const line of exportPlants(store)) exported += line;
    assert.equal(
      exported,
      '{"id":1,"name":"Fern"}\n{"id":2,"name":"Moss"}\n{"id":3,"name":"Ivy","tag":"climber"}\n' +
        '{"id":9223372036854775807,"name":"max"}\n',
    );
  });
});
