// The conditions of RFC 9110 section 13 (src/domain/preconditions.ts) as a table: on a
// representation with an entity tag (a plant: the write path and a read of one plant), and on one
// without (a page of the list, the metrics: only `*` names it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failedPrecondition, type Preconditions } from '../../src/domain/preconditions.js';

const E = '"current"';
const OTHER = '"other"';

/** [conditions, what fails with the tag E, what fails without a tag]. */
const TABLE: [Preconditions, string | undefined, string | undefined][] = [
  [{}, undefined, undefined],
  [{ ifMatch: '*' }, undefined, undefined],
  [{ ifMatch: [E] }, undefined, 'If-Match'],
  [{ ifMatch: [OTHER] }, 'If-Match', 'If-Match'],
  [{ ifMatch: [OTHER, E] }, undefined, 'If-Match'],
  [{ ifMatch: [] }, 'If-Match', 'If-Match'],
  [{ ifNoneMatch: '*' }, 'If-None-Match', 'If-None-Match'],
  [{ ifNoneMatch: [E] }, 'If-None-Match', undefined],
  [{ ifNoneMatch: [OTHER] }, undefined, undefined],
  [{ ifNoneMatch: [OTHER, E] }, 'If-None-Match', undefined],
  [{ ifNoneMatch: [] }, undefined, undefined],
  [{ ifMatch: [OTHER], ifNoneMatch: '*' }, 'If-Match', 'If-Match'],
  [{ ifMatch: '*', ifNoneMatch: '*' }, 'If-None-Match', 'If-None-Match'],
  [{ ifMatch: [E], ifNoneMatch: [OTHER] }, undefined, 'If-Match'],
  [{ ifMatch: '*', ifNoneMatch: [E] }, 'If-None-Match', undefined],
];

describe('failedPrecondition: If-Match first, then If-None-Match', () => {
  for (const [conditions, withTag, withoutTag] of TABLE) {
    it(`${JSON.stringify(conditions)}: ${withTag ?? 'holds'} with the tag, ${withoutTag ?? 'holds'} without`, () => {
      assert.equal(failedPrecondition(conditions, E), withTag);
      assert.equal(failedPrecondition(conditions, undefined), withoutTag);
    });
  }
});
