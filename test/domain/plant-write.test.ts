// The rules of a plant write (src/domain/plant-write.ts), as tables: each write against a plant
// present or absent, and what `decideWrite` answers (the outcome, and the row change a store
// makes, if any). No store: the rules alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PlantRecord } from '../../src/domain/plant.js';
import {
  decideWrite,
  etagOf,
  eventOf,
  writeId,
  type PlantWrite,
  type WriteDecision,
} from '../../src/domain/plant-write.js';
import type { Preconditions } from '../../src/domain/preconditions.js';

const FERN: PlantRecord = { id: 7n, name: 'Fern', tag: 'green' };
const BARE: PlantRecord = { id: 7n, name: 'Fern' };
const EMPTY_TAG: PlantRecord = { id: 7n, name: 'Fern', tag: '' };

const nothing = (outcome: WriteDecision['outcome']): WriteDecision => ({ outcome, change: undefined });
const updated = (before: PlantRecord, plant: PlantRecord): WriteDecision => ({
  outcome: { kind: 'updated', plant },
  change: { kind: 'update', plant, before },
});

/** [what, the write, the plant stored under its id (undefined: none), the decision]. */
const CASES: [string, PlantWrite, PlantRecord | undefined, WriteDecision][] = [
  // Create: a new id, an identical retry, a conflict (an absent tag differs from "").
  [
    'create of a free id',
    { kind: 'create', plant: FERN },
    undefined,
    { outcome: { kind: 'created', plant: FERN }, change: { kind: 'insert', plant: FERN } },
  ],
  [
    'create retried, identical',
    { kind: 'create', plant: { ...FERN } },
    FERN,
    nothing({ kind: 'unchanged', plant: FERN }),
  ],
  [
    'create with another name',
    { kind: 'create', plant: { ...FERN, name: 'Moss' } },
    FERN,
    nothing({ kind: 'conflict', existing: FERN }),
  ],
  [
    'create with another tag',
    { kind: 'create', plant: { ...FERN, tag: 'x' } },
    FERN,
    nothing({ kind: 'conflict', existing: FERN }),
  ],
  [
    'create without the tag stored',
    { kind: 'create', plant: BARE },
    FERN,
    nothing({ kind: 'conflict', existing: FERN }),
  ],
  [
    'create with "" where no tag is',
    { kind: 'create', plant: EMPTY_TAG },
    BARE,
    nothing({ kind: 'conflict', existing: BARE }),
  ],
  // Replace: name and tag as given, an absent tag removing the one stored.
  [
    'replace with the same content',
    { kind: 'replace', plant: { ...FERN } },
    FERN,
    nothing({ kind: 'unchanged', plant: FERN }),
  ],
  [
    'replace with another name',
    { kind: 'replace', plant: { ...FERN, name: 'Moss' } },
    FERN,
    updated(FERN, { ...FERN, name: 'Moss' }),
  ],
  ['replace without a tag', { kind: 'replace', plant: BARE }, FERN, updated(FERN, BARE)],
  ['replace with "" for no tag', { kind: 'replace', plant: EMPTY_TAG }, BARE, updated(BARE, EMPTY_TAG)],
  ['replace of an absent plant', { kind: 'replace', plant: FERN }, undefined, nothing({ kind: 'not-found' })],
  // Patch: an absent member keeps, a value sets, `tag: null` removes the tag.
  ['patch with nothing in it', { kind: 'patch', id: 7n, patch: {} }, FERN, nothing({ kind: 'unchanged', plant: FERN })],
  [
    'patch of the name, keeping the tag',
    { kind: 'patch', id: 7n, patch: { name: 'Moss' } },
    FERN,
    updated(FERN, { ...FERN, name: 'Moss' }),
  ],
  [
    'patch of the tag, keeping the name',
    { kind: 'patch', id: 7n, patch: { tag: 'shade' } },
    FERN,
    updated(FERN, { ...FERN, tag: 'shade' }),
  ],
  [
    'patch setting a tag where none is',
    { kind: 'patch', id: 7n, patch: { tag: 'shade' } },
    BARE,
    updated(BARE, { ...BARE, tag: 'shade' }),
  ],
  ['patch setting the tag ""', { kind: 'patch', id: 7n, patch: { tag: '' } }, FERN, updated(FERN, EMPTY_TAG)],
  ['patch removing the tag', { kind: 'patch', id: 7n, patch: { tag: null } }, FERN, updated(FERN, BARE)],
  [
    'patch removing the tag "" (a tag)',
    { kind: 'patch', id: 7n, patch: { tag: null } },
    EMPTY_TAG,
    updated(EMPTY_TAG, BARE),
  ],
  [
    'patch removing a tag that is not there',
    { kind: 'patch', id: 7n, patch: { tag: null } },
    BARE,
    nothing({ kind: 'unchanged', plant: BARE }),
  ],
  [
    'patch of both',
    { kind: 'patch', id: 7n, patch: { name: 'Moss', tag: null } },
    FERN,
    updated(FERN, { id: 7n, name: 'Moss' }),
  ],
  [
    'patch to what is stored',
    { kind: 'patch', id: 7n, patch: { name: 'Fern', tag: 'green' } },
    FERN,
    nothing({ kind: 'unchanged', plant: FERN }),
  ],
  [
    'patch of an absent plant',
    { kind: 'patch', id: 7n, patch: { name: 'Moss' } },
    undefined,
    nothing({ kind: 'not-found' }),
  ],
  // Delete.
  [
    'delete',
    { kind: 'delete', id: 7n },
    FERN,
    { outcome: { kind: 'deleted', plant: FERN }, change: { kind: 'delete', plant: FERN } },
  ],
  ['delete of an absent plant', { kind: 'delete', id: 7n }, undefined, nothing({ kind: 'not-found' })],
];

describe('decideWrite: each write, against a plant present or absent', () => {
  for (const [what, write, current, decision] of CASES) {
    it(what, () => assert.deepEqual(decideWrite(write, current), decision));
  }
});

const E = etagOf(FERN);
const STALE = etagOf({ ...FERN, name: 'Old fern' });

/**
 * [conditions, which header fails on the plant present (undefined: the write goes ahead)]. The
 * edge leaves weak tags out of an If-Match list (a strong comparison never matches them), so a
 * list of weak tags only arrives empty; it turns If-None-Match's `W/"x"` into `"x"` (weak
 * comparison), so that form is the plain tag here.
 */
const CONDITIONS: [Preconditions, 'If-Match' | 'If-None-Match' | undefined][] = [
  [{}, undefined],
  [{ ifMatch: '*' }, undefined],
  [{ ifMatch: [E] }, undefined],
  [{ ifMatch: [STALE] }, 'If-Match'],
  [{ ifMatch: [STALE, E] }, undefined],
  [{ ifMatch: [] }, 'If-Match'],
  [{ ifNoneMatch: '*' }, 'If-None-Match'],
  [{ ifNoneMatch: [E] }, 'If-None-Match'],
  [{ ifNoneMatch: [STALE] }, undefined],
  [{ ifNoneMatch: [STALE, E] }, 'If-None-Match'],
  [{ ifNoneMatch: [] }, undefined],
  // If-Match is evaluated first (RFC 9110 13.2.2).
  [{ ifMatch: [STALE], ifNoneMatch: '*' }, 'If-Match'],
  [{ ifMatch: [STALE], ifNoneMatch: [STALE] }, 'If-Match'],
  [{ ifMatch: '*', ifNoneMatch: '*' }, 'If-None-Match'],
  [{ ifMatch: [E], ifNoneMatch: [E] }, 'If-None-Match'],
  [{ ifMatch: [E], ifNoneMatch: [STALE] }, undefined],
];

/** The conditional writes, and the outcome each has when its conditions hold. */
const CONDITIONAL: [string, (conditions: Preconditions) => PlantWrite, WriteDecision][] = [
  ['replace', (conditions) => ({ kind: 'replace', plant: BARE, conditions }), updated(FERN, BARE)],
  ['patch', (conditions) => ({ kind: 'patch', id: 7n, patch: { tag: null }, conditions }), updated(FERN, BARE)],
  [
    'delete',
    (conditions) => ({ kind: 'delete', id: 7n, conditions }),
    { outcome: { kind: 'deleted', plant: FERN }, change: { kind: 'delete', plant: FERN } },
  ],
];

describe('decideWrite: If-Match and If-None-Match on replace, patch and delete', () => {
  for (const [kind, write, ahead] of CONDITIONAL) {
    for (const [conditions, failed] of CONDITIONS) {
      const named = `${kind} with ${JSON.stringify(conditions).replaceAll(E, 'current').replaceAll(STALE, 'stale')}`;
      it(`${named}: ${failed ? `fails ${failed}` : 'goes ahead'} on a plant; not-found without one`, () => {
        const decided = decideWrite(write(conditions), FERN);
        assert.deepEqual(decided, failed ? nothing({ kind: 'precondition-failed', current: FERN, failed }) : ahead);
        // Without the plant the write would be 404: its conditions are not evaluated (13.2.1).
        assert.deepEqual(decideWrite(write(conditions), undefined), nothing({ kind: 'not-found' }));
      });
    }
  }

  it('a failed condition wins over a change that would change nothing', () => {
    const write: PlantWrite = { kind: 'replace', plant: { ...FERN }, conditions: { ifMatch: [STALE] } };
    assert.deepEqual(
      decideWrite(write, FERN),
      nothing({ kind: 'precondition-failed', current: FERN, failed: 'If-Match' }),
    );
    assert.deepEqual(
      decideWrite({ ...write, conditions: { ifMatch: [E] } }, FERN),
      nothing({ kind: 'unchanged', plant: FERN }),
    );
  });
});

describe('the ETag, the id of a write and the event of a change', () => {
  it('a strong ETag that changes with the name or the tag, and only with them', () => {
    assert.match(E, /^"[A-Za-z0-9_-]{27}"$/);
    assert.equal(etagOf({ ...FERN }), E);
    const others = [BARE, EMPTY_TAG, { ...FERN, name: 'Moss' }, { ...FERN, id: 8n }, { ...FERN, tag: 'Green' }];
    assert.equal(new Set([E, ...others.map(etagOf)]).size, others.length + 1);
  });

  it('the id each write touches', () => {
    assert.deepEqual(
      [
        writeId({ kind: 'create', plant: FERN }),
        writeId({ kind: 'replace', plant: { ...FERN, id: -1n } }),
        writeId({ kind: 'patch', id: 2n ** 63n - 1n, patch: {} }),
        writeId({ kind: 'delete', id: -(2n ** 63n) }),
      ],
      [7n, -1n, 2n ** 63n - 1n, -(2n ** 63n)],
    );
  });

  it('each row change announces its event', () => {
    assert.equal(eventOf({ kind: 'insert', plant: FERN }), 'plant.created');
    assert.equal(eventOf({ kind: 'update', plant: FERN, before: BARE }), 'plant.updated');
    assert.equal(eventOf({ kind: 'delete', plant: FERN }), 'plant.deleted');
  });
});
