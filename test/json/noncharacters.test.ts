// RFC 7493 section 2.1: I-JSON strings and member names must not hold noncharacters, escaped or
// not. Unicode has 66: U+FDD0..U+FDEF and the last two code points of each of the 17 planes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isNoncharacter, JsonReadError, readJson } from '../../src/json/read-json.js';

const NONCHARACTERS: number[] = [];
for (let cp = 0xfdd0; cp <= 0xfdef; cp++) NONCHARACTERS.push(cp);
for (let plane = 0; plane <= 0x10; plane++) NONCHARACTERS.push(plane * 0x10000 + 0xfffe, plane * 0x10000 + 0xffff);

/** Neighbours that are ordinary characters. */
const NEIGHBOURS = [0xfdcf, 0xfdf0, 0xfffd, 0x1fffd, 0x10000, 0x10fffd, 0xe000, 0xd7ff];

/** `\uXXXX`, or the `\uD8xx\uDCxx` pair, for a code point. */
function escaped(cp: number): string {
  return [...String.fromCodePoint(cp)].length === 1 && cp > 0xffff
    ? String.fromCodePoint(cp)
        .split('')
        .map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`)
        .join('')
    : `\\u${cp.toString(16).padStart(4, '0')}`;
}

function refused(input: string | Uint8Array, what: string): void {
  assert.throws(
    () => readJson(input),
    (err: unknown) => err instanceof JsonReadError && /noncharacter U\+[0-9A-F]{4,6}/.test(err.message),
    what,
  );
}

describe('readJson refuses noncharacters (RFC 7493 section 2.1)', () => {
  it('knows the 66 noncharacters', () => {
    assert.equal(NONCHARACTERS.length, 66);
    for (const cp of NONCHARACTERS) assert.ok(isNoncharacter(cp), cp.toString(16));
    for (const cp of NEIGHBOURS) assert.ok(!isNoncharacter(cp), cp.toString(16));
  });

  for (const cp of NONCHARACTERS) {
    const name = `U+${cp.toString(16).toUpperCase()}`;
    it(`${name}: escaped, raw in text, raw in UTF-8; in a value and in a member name`, () => {
      const raw = String.fromCodePoint(cp);
      for (const s of [escaped(cp), escaped(cp).toUpperCase().replace(/\\U/g, '\\u'), raw, `a${raw}b`]) {
        refused(`{"name":"${s}"}`, `${name} as a value: ${s}`);
        refused(`{"${s}":1}`, `${name} as a member name: ${s}`);
        refused(`["x","${s}"]`, `${name} in an array`);
        refused(Buffer.from(`{"name":"${s}"}`, 'utf8'), `${name} as UTF-8 bytes`);
      }
    });
  }

  it('accepts the characters next to them', () => {
    for (const cp of NEIGHBOURS) {
      const raw = String.fromCodePoint(cp);
      assert.equal((readJson(`{"a":"${escaped(cp)}"}`) as { a: string }).a, raw, cp.toString(16));
      assert.equal((readJson(Buffer.from(`{"a":"${raw}"}`)) as { a: string }).a, raw, cp.toString(16));
    }
  });

  it('says where the noncharacter is', () => {
    const err = (() => {
      try {
        readJson('{"name":"ab\\uffff"}');
      } catch (e) {
        return e as JsonReadError;
      }
      throw new Error('accepted');
    })();
    assert.equal(err.position, 11);
    assert.match(err.message, /noncharacter U\+FFFF/);
  });
});
