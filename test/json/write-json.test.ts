import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readJson } from '../../src/json/read-json.js';
import { writeJson } from '../../src/json/write-json.js';

describe('writeJson', () => {
  it('writes bigints digit for digit, and reads back exactly', () => {
    const value = { id: 2n ** 63n - 1n, low: -(2n ** 63n), list: [2n ** 53n + 1n, 1], name: 'Monstera' };
    const text = writeJson(value);
    assert.equal(
      text,
      '{"id":9223372036854775807,"low":-9223372036854775808,"list":[9007199254740993,1],"name":"Monstera"}',
    );
    assert.deepEqual(structuredClone(readJson(text)), { ...value, list: [2n ** 53n + 1n, 1] });
  });

  it('writes everything else as JSON.stringify does', () => {
    const values: unknown[] = [
      { a: undefined, b: () => 1, c: null, d: [undefined, () => 1, Symbol('s')], e: new Date(0), f: 'x"\u0000\ud800' },
      [1.5, -0, NaN, Infinity, true, 'é'],
      'text',
      null,
    ];
    for (const value of values) assert.equal(writeJson(value), JSON.stringify(value));
  });

  it('refuses what JSON cannot hold at all', () => {
    assert.throws(() => writeJson(undefined), TypeError);
  });
});
