import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InexactNumber, isNoncharacter, JsonReadError, readJson } from '../../src/json/read-json.js';

/** Rebuilds objects with the ordinary prototype so deepEqual can compare with JSON.parse output. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object' && !(value instanceof InexactNumber)) {
    // fromEntries defines own properties, so a "__proto__" key stays a key.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  }
  return value;
}

function rejects(input: string | Uint8Array, message: RegExp, position?: number): JsonReadError {
  let caught: unknown;
  try {
    readJson(input);
  } catch (err) {
    caught = err;
  }
  assert.ok(
    caught instanceof JsonReadError,
    `expected JsonReadError for ${JSON.stringify(String(input))}, got ${String(caught)}`,
  );
  assert.match(caught.message, message);
  assert.equal(typeof caught.position, 'number');
  assert.ok(Number.isInteger(caught.position) && caught.position >= 0);
  if (position !== undefined) assert.equal(caught.position, position);
  return caught;
}

describe('readJson: valid documents', () => {
  it('matches JSON.parse for documents of every kind', () => {
    const docs = [
      '{}',
      '[]',
      '0',
      '-1',
      '1.5',
      '"x"',
      'true',
      'false',
      'null',
      ' \t\r\n{ "a" : [ 1 , 2 ] } \n',
      '{"name":"Fern","price":12.5,"tags":["green","shade"],"stock":null,"ok":true,"nested":{"x":{"y":[[],{}]}}}',
      '["\\"\\\\\\/\\b\\f\\n\\r\\t","\\u00e9\\u00E9","é 🌿 中"]',
      '[0.0e0,1E-7,123456789012345,-2.5E+3]',
    ];
    for (const doc of docs) assert.deepEqual(normalize(readJson(doc)), JSON.parse(doc), doc);
  });

  it('accepts Buffer and Uint8Array input', () => {
    const doc = '{"plant":"🌿","id":9007199254740993}';
    assert.deepEqual(normalize(readJson(Buffer.from(doc))), { plant: '🌿', id: 9007199254740993n });
    assert.deepEqual(normalize(readJson(new TextEncoder().encode(doc))), {
      plant: '🌿',
      id: 9007199254740993n,
    });
  });

  it('creates objects that inherit nothing, and allows an escaped NUL', () => {
    const obj = readJson('{"a":"\\u0000"}') as Record<string, unknown>;
    for (const inherited of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      assert.equal(inherited in obj, false, inherited);
    }
    assert.equal(Object.getPrototypeOf(Object.getPrototypeOf(obj)), null);
    assert.deepEqual(Object.keys(Object.getPrototypeOf(obj) as object), []);
    assert.equal(obj['a'], '\0');
    // Those names are members like any other, once each.
    const named = readJson('{"__proto__":1,"constructor":2,"toString":3}') as Record<string, unknown>;
    assert.deepEqual({ ...named }, { ['__proto__']: 1, constructor: 2, toString: 3 });
    assert.throws(() => readJson('{"constructor":1,"constructor":2}'), /duplicate member name "constructor"/);
  });

  it('stops at maxValues, counting every value, however small', () => {
    assert.equal(JSON.stringify(readJson('[{},[],1,"a",true]', { maxValues: 6 })), '[{},[],1,"a",true]');
    assert.throws(() => readJson('[{},[],1,"a",true]', { maxValues: 5 }), /the body holds more than 5 JSON values/);
    assert.throws(() => readJson('{"a":{"b":null}}', { maxValues: 2 }), JsonReadError);
  });
});

describe('readJson: numbers', () => {
  it('reads int64 edges and beyond exactly as bigint', () => {
    const cases: [string, bigint][] = [
      ['9007199254740992', 2n ** 53n],
      ['9007199254740993', 2n ** 53n + 1n],
      ['-9007199254740993', -(2n ** 53n) - 1n],
      ['9223372036854775807', 2n ** 63n - 1n],
      ['-9223372036854775808', -(2n ** 63n)],
      ['9223372036854775808', 2n ** 63n],
      ['-9223372036854775809', -(2n ** 63n) - 1n],
      ['9007199254740993.000', 2n ** 53n + 1n],
      ['1e19', 10n ** 19n],
      ['1234567890123456789012345678901234567890', 1234567890123456789012345678901234567890n],
      ['1e39', 10n ** 39n],
    ];
    for (const [text, expected] of cases) {
      assert.equal(readJson(text), expected, text);
      assert.deepEqual({ ...(readJson(`{"id":${text}}`) as object) }, { id: expected });
    }
  });

  it('reads whole numbers in the safe range as numbers', () => {
    const cases: [string, number][] = [
      ['9007199254740991', 2 ** 53 - 1],
      ['-9007199254740991', -(2 ** 53 - 1)],
      ['1', 1],
      ['1.0', 1],
      ['1e3', 1000],
      ['1E+2', 100],
      ['0.5e1', 5],
      ['1.5e1', 15],
      ['100e-2', 1],
      ['0e5', 0],
      ['1000000000000000', 1e15],
      ['0.000', 0],
      ['12345678901234500000e-5', 123456789012345],
    ];
    for (const [text, expected] of cases) assert.equal(readJson(text), expected, text);
    for (const negZero of ['-0', '-0.0', '-0e3', '-0E-2']) assert.ok(Object.is(readJson(negZero), 0), negZero);
  });

  it('reads fractions as numbers', () => {
    assert.equal(readJson('1.5'), 1.5);
    assert.equal(readJson('-0.25'), -0.25);
    assert.equal(readJson('15e-1'), 1.5);
    assert.equal(readJson('1.2345e-300'), 1.2345e-300);
    assert.equal(readJson('4503599627370495.5'), 4503599627370495.5); // still exact below 2^52
  });

  it('keeps fractions that a float would round to a whole number as InexactNumber', () => {
    for (const text of [
      '1e-400',
      '-1e-400',
      '9007199254740993.5',
      '12345678901234567890123e-3',
      '0.99999999999999999999',
    ]) {
      const value = readJson(text);
      assert.ok(value instanceof InexactNumber, text);
      assert.equal(value.text, text);
    }
    // A fraction too large for a float is not turned into Infinity either.
    assert.ok(readJson(`${'9'.repeat(400)}.5`) instanceof InexactNumber);
  });

  it('reads astronomically large whole numbers as non-safe floats', () => {
    const big = readJson('1e400');
    assert.equal(typeof big, 'number');
    assert.ok(!Number.isSafeInteger(big));
    assert.equal(readJson('1e41'), 1e41);
    assert.equal(readJson('-1e400'), -Infinity);
  });

  it('does not build huge values from huge exponents', () => {
    const started = process.hrtime.bigint();
    assert.equal(readJson('1e999999999'), Infinity);
    assert.equal(readJson('1e99999999999999999999999999'), Infinity);
    assert.ok(readJson('1e-999999999') instanceof InexactNumber);
    assert.equal(readJson('0e999999999'), 0);
    assert.equal(readJson(`1e${'9'.repeat(400)}`), Infinity);
    assert.ok(readJson(`1e-${'9'.repeat(400)}`) instanceof InexactNumber);
    assert.equal(readJson(`-0.0e${'9'.repeat(400)}`), 0);
    assert.ok(process.hrtime.bigint() - started < 100_000_000n, 'took over 100 ms');
  });

  it('rejects numbers outside the strict grammar', () => {
    for (const bad of [
      '+1',
      '01',
      '-01',
      '00',
      '.5',
      '1.',
      '1.e5',
      '-',
      '1e',
      '1e+',
      '0x10',
      '-Infinity',
      'Infinity',
      'NaN',
      '1_000',
      '- 1',
    ]) {
      rejects(bad, /^invalid JSON at position \d+: /);
      rejects(`[${bad}]`, /^invalid JSON at position \d+: /);
    }
    rejects('01', /leading zeros/, 0);
    rejects('1.', /digit after the decimal point/, 2);
  });
});

describe('readJson: grammar violations', () => {
  it('rejects non-JSON literals, quotes, comments, trailing commas and unquoted keys', () => {
    const bad = [
      'undefined',
      'True',
      'nul',
      "'x'",
      "{'a':1}",
      '{a:1}',
      '[1,]',
      '{"a":1,}',
      '[,1]',
      '[1 2]',
      '{"a" 1}',
      '{"a":1 "b":2}',
      '[1]/*c*/',
      '// c\n1',
      '{"a":}',
      '[',
      '{',
      '{"a":1',
      '"abc',
      '{"a"',
      '[1,',
      '\u00a01',
      '{"a":1}\u00a0',
      '\f1',
    ];
    for (const doc of bad) rejects(doc, /^invalid JSON at position \d+: /);
    rejects('{"a" 1}', /expected ':' after member name/, 5);
    rejects('{a:1}', /expected a member name/, 1);
    rejects('[1,]', /expected a value/, 3);
  });

  it('rejects invalid string contents', () => {
    for (const ch of ['\u0000', '\u0001', '\n', '\t', '\u001f']) rejects(`"a${ch}b"`, /control character/, 2);
    for (const esc of ['\\x41', '\\v', '\\e', '\\a', '\\u12', '\\u12g4', '\\U0041', '\\0', "\\'", '\\'])
      rejects(`"${esc}"`, /escape|unterminated/);
    rejects('"abc', /unterminated string/, 4);
  });

  it('rejects an empty body', () => {
    for (const empty of ['', ' ', '\n\r\t ']) rejects(empty, /body is empty/);
    rejects(new Uint8Array(0), /body is empty/, 0);
  });

  it('rejects data after the value', () => {
    for (const doc of ['{} x', '{}{}', '1 2', 'true false', '"a""b"', 'nullx', '[]]', '{}\u0000']) {
      rejects(doc, /unexpected data after the JSON value/);
    }
    rejects('{} x', /unexpected data/, 3);
  });
});

describe('readJson: I-JSON rules', () => {
  it('rejects duplicate member names, also when escaped differently', () => {
    rejects('{"a":1,"a":2}', /duplicate member name "a"/, 7);
    rejects('{"a":1,"\\u0061":2}', /duplicate member name "a"/);
    rejects('{"x":{"b":1,"c":2,"b":3}}', /duplicate member name "b"/);
    rejects('{"__proto__":1,"__proto__":2}', /duplicate member name "__proto__"/);
    assert.deepEqual(normalize(readJson('[{"a":1},{"a":2}]')), [{ a: 1 }, { a: 2 }]);
  });

  it('keeps __proto__ and constructor as plain own keys without polluting prototypes', () => {
    const obj = readJson('{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}}') as Record<
      string,
      unknown
    >;
    assert.deepEqual(Object.keys(obj), ['__proto__', 'constructor']);
    assert.ok(Object.hasOwn(obj, '__proto__'));
    assert.equal((obj['__proto__'] as Record<string, unknown>)['polluted'], 1);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal((Object.prototype as unknown as Record<string, unknown>)['polluted'], undefined);
  });

  it('rejects lone surrogate escapes in values and member names', () => {
    const lone = [
      '"\\ud800"',
      '"\\uDBFF x"',
      '"\\udc00"',
      '"a\\uDFFF"',
      '"\\ud83c\\u0041"',
      '"\\ud83c\\ud83c"',
      '"\\ud83c\\n"',
      '"\\udf3f\\ud83c"',
    ];
    for (const str of lone) {
      rejects(str, /invalid Unicode escape \(lone surrogate\)/);
      rejects(`{${str}:1}`, /invalid Unicode escape \(lone surrogate\)/);
      rejects(`{"k":[${str}]}`, /invalid Unicode escape \(lone surrogate\)/);
    }
    rejects('"\\ud800"', /lone surrogate/, 1);
  });

  it('rejects raw lone surrogates in string input', () => {
    rejects('"\ud800"', /lone surrogate/, 1);
    rejects('"\udc00x"', /lone surrogate/, 1);
    rejects('{"\ud800":1}', /lone surrogate/, 2);
  });

  it('accepts a valid surrogate pair escape', () => {
    assert.equal(readJson('"\\ud83c\\udf3f"'), '🌿');
    assert.equal(readJson('"\\uD83C\\uDF3F!"'), '🌿!');
    assert.deepEqual(normalize(readJson('{"\\ud83c\\udf3f":"🌿"}')), { '🌿': '🌿' });
  });

  it('rejects invalid UTF-8', () => {
    const bad = [
      [0x22, 0xff, 0x22],
      [0x22, 0xc3, 0x22],
      [0x22, 0xed, 0xa0, 0x80, 0x22],
      [0x22, 0xc0, 0xaf, 0x22],
      [0xe2, 0x82],
    ];
    for (const bytes of bad) rejects(new Uint8Array(bytes), /body is not valid UTF-8/);
  });

  it('rejects a byte order mark', () => {
    rejects(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), /byte order mark is not allowed/, 0);
    rejects('\ufeff{}', /byte order mark is not allowed/, 0);
  });
});

describe('readJson: nesting depth', () => {
  const nest = (depth: number, open: string, close: string): string => open.repeat(depth) + close.repeat(depth);
  it('accepts 32 levels and rejects 33 by default', () => {
    assert.ok(Array.isArray(readJson(nest(32, '[', ']'))));
    rejects(nest(33, '[', ']'), /nesting deeper than 32 levels/, 32);
    const objects = (depth: number): string => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
    assert.equal(typeof readJson(objects(32)), 'object');
    rejects(objects(33), /nesting deeper than 32 levels/);
    rejects(`[${'{"a":['.repeat(16)}]`, /nesting deeper than 32 levels/);
  });

  it('honours maxDepth and rejects deep input without exhausting the stack', () => {
    assert.deepEqual(readJson('[[1]]', { maxDepth: 2 }), [[1]]);
    assert.throws(() => readJson('[[[1]]]', { maxDepth: 2 }), /nesting deeper than 2 levels/);
    assert.equal(readJson('1', { maxDepth: 0 }), 1);
    assert.throws(() => readJson('[]', { maxDepth: 0 }), JsonReadError);
    rejects('['.repeat(1_000_000), /nesting deeper than 32 levels/);
  });
});

describe('readJson: errors', () => {
  it('reports plain-English messages with positions', () => {
    const err = rejects('{"a":1,"b" 2}', /^invalid JSON at position 11: expected ':' after member name$/, 11);
    assert.equal(err.name, 'JsonReadError');
    assert.ok(err instanceof Error);
    assert.doesNotMatch(err.message, /JSON\.parse|TextDecoder|BigInt|undefined|NaN/);
  });
});

// Deterministic PRNG (mulberry32) so a failure can be reproduced.
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomString(rand: () => number): string {
  let out = '';
  const length = Math.floor(rand() * 8);
  for (let i = 0; i < length; i++) {
    const kind = rand();
    let cp: number;
    if (kind < 0.4)
      cp = Math.floor(rand() * 0x80); // ASCII, including controls, quotes and backslash
    else if (kind < 0.8) cp = Math.floor(rand() * 0xd800);
    else if (kind < 0.9) cp = 0xe000 + Math.floor(rand() * 0x2000);
    else cp = 0x10000 + Math.floor(rand() * 0x100000);
    // I-JSON strings hold no noncharacters (RFC 7493 section 2.1): those are tested on their own.
    out += String.fromCodePoint(isNoncharacter(cp) ? 0x2603 : cp);
  }
  return out;
}

function randomValue(rand: () => number, depth: number): unknown {
  const kind = Math.floor(rand() * (depth >= 5 ? 6 : 8));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2: {
      const magnitude = rand() < 0.5 ? 1000 : Number.MAX_SAFE_INTEGER;
      return Math.round((rand() * 2 - 1) * magnitude);
    }
    case 3: {
      const x = (rand() - 0.5) * 10 ** Math.floor(rand() * 30 - 15);
      return Number.isInteger(x) ? x + 0.5 : x;
    }
    case 4:
    case 5:
      return randomString(rand);
    case 6:
      return Array.from({ length: Math.floor(rand() * 5) }, () => randomValue(rand, depth + 1));
    default: {
      const obj = Object.create(null) as Record<string, unknown>;
      const size = Math.floor(rand() * 5);
      for (let i = 0; i < size; i++) obj[randomString(rand)] = randomValue(rand, depth + 1);
      return obj;
    }
  }
}

describe('readJson: randomised', () => {
  it('round-trips 500 random documents like JSON.parse', () => {
    const rand = prng(0x5eed);
    for (let n = 0; n < 500; n++) {
      const doc = JSON.stringify(randomValue(rand, 0), null, rand() < 0.3 ? '\t' : undefined);
      assert.deepEqual(normalize(readJson(doc)), JSON.parse(doc), doc);
      assert.deepEqual(normalize(readJson(Buffer.from(doc))), JSON.parse(doc), doc);
    }
  });

  it('only ever throws JsonReadError, and rejects whatever JSON.parse rejects', () => {
    const rand = prng(42);
    const alphabet = '{}[]":,.-+eE0123456789 \\u\nabtrfnslx\u0000';
    for (let n = 0; n < 2000; n++) {
      const chars = [...JSON.stringify(randomValue(rand, 0))];
      for (let k = 0; k < 3; k++)
        chars[Math.floor(rand() * chars.length)] = alphabet[Math.floor(rand() * alphabet.length)] ?? '';
      const doc = chars.join('');
      let parsedByBuiltin = true;
      try {
        JSON.parse(doc);
      } catch {
        parsedByBuiltin = false;
      }
      try {
        readJson(doc);
        assert.ok(parsedByBuiltin, `accepted invalid JSON ${JSON.stringify(doc)}`);
      } catch (err) {
        if (!(err instanceof JsonReadError)) throw err;
      }
    }
  });
});
