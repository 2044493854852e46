// A bounded fuzz of what a client controls: random mutations of valid POST /plants and
// PUT /plants/{id} bodies, of the {id} path segment and of GET /plants's query string. Seeded
// and printed (TEST_SEED=<n>, or FUZZ_SEED=<n>, replays a run). Every response is a declared status in the Error
// shape when it is an error (send() checks each against the document), never a 500; a refused
// request leaves the store as it was; the app is alive at the end. SQLite only: the store is a
// witness here, not the subject.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../helper.js';
import { send, type RawResponse } from '../support/http.js';
import { prng, testSeed } from '../support/seed.js';

const SEED = testSeed('FUZZ_SEED');
const ROUNDS = { post: 400, put: 200, path: 200, query: 200 };

const rand = prng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const int = (n: number) => Math.floor(rand() * n);

/** Pieces that tend to matter to a JSON reader, a UTF-8 decoder or a schema. */
const TOKENS = [
  '"',
  '\\',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  ' ',
  '\t',
  '\n',
  '\r',
  '0',
  '-',
  '.',
  'e',
  'E',
  '+',
  '\\u0000',
  '\\ud800',
  '\\udc00',
  '\\ud83c\\udf3f',
  '\\uffff',
  '\\ufffe',
  '\\ufdd0',
  '\\u00e9',
  '"id":1,',
  '"id":2,',
  '"name":"x",',
  '"tag":null,',
  '"__proto__":{},',
  'null',
  'true',
  'false',
  '1e400',
  '-0',
  '1.5',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '0x10',
  '01',
  'NaN',
  'Infinity',
  '"' + 'x'.repeat(300) + '"',
  '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[',
];
const BYTES = [0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xfe, 0xff];
const TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-16',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json;;',
  '',
];

function mutate(valid: string): Buffer {
  let bytes = Buffer.from(valid, 'utf8');
  const steps = 1 + int(4);
  for (let s = 0; s < steps; s++) {
    const at = int(bytes.length + 1);
    const kind = int(7);
    if (kind === 0) bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(pick(TOKENS)), bytes.subarray(at)]);
    else if (kind === 1) bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([pick(BYTES)]), bytes.subarray(at)]);
    else if (kind === 2 && bytes.length > 0)
      bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + int(4))]);
    else if (kind === 3 && at < bytes.length) bytes[at] = int(256);
    else if (kind === 4) bytes = bytes.subarray(0, at);
    else if (kind === 5) {
      const from = int(bytes.length);
      bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(from, from + 1 + int(12)), bytes.subarray(at)]);
    } else
      bytes = Buffer.concat([
        bytes.subarray(0, at),
        Buffer.from(String.fromCodePoint(int(0x110000) & ~0x800 || 0x41)),
        bytes.subarray(at),
      ]);
  }
  return bytes;
}

/** A path segment or query value a client could type: digits, signs, encodings, junk. */
function fuzzValue(): string {
  const base = pick(['1', '42', '-1', '0', '9223372036854775807', '-9223372036854775808', '20', '1000', '']);
  const pieces = [
    base,
    pick([
      '',
      '0',
      '9',
      '-',
      '+',
      '.',
      'e3',
      ' ',
      '%20',
      '%2F',
      '%00',
      '%ff',
      '%E2%80%8B',
      '%',
      '%zz',
      '..',
      '\u00e9',
      '\u{1F33F}',
      '%2e%2e',
      ';x',
      '#',
      '?',
    ]),
    pick(['', '', base, '1'.repeat(int(40)), 'pst_abcd']),
  ];
  return pieces.sort(() => rand() - 0.5).join('');
}

describe(`fuzz (seed ${SEED}; TEST_SEED=${SEED} replays it)`, () => {
  let server: TestApp;
  let auth: Record<string, string>;
  const seeded = [
    '{"id":1,"name":"Monstera","tag":"tropical"}',
    '{"id":2,"name":"Fern"}',
    '{"id":3,"name":"Pothos","tag":""}',
  ];

  before(async () => {
    server = await buildTestApp();
    auth = { authorization: `Bearer ${server.token}` };
    for (const body of seeded) {
      const r = await send(server, {
        method: 'POST',
        path: '/plants',
        headers: { ...auth, 'content-type': 'application/json' },
        body,
      });
      assert.equal(r.status, 200);
    }
  });
  after(async () => {
    await server?.close();
  });

  const snapshot = async () =>
    JSON.stringify(
      (await server.services.store.plants.list({}, 1000)).map((p) => [String(p.id), p.name, p.tag ?? null]),
    );

  /** Sends one fuzzed request and holds it to the invariants; `ok` are the statuses it may get. */
  async function check(what: string, req: Parameters<typeof send>[1], ok: number[]): Promise<RawResponse> {
    const before = await snapshot();
    let r: RawResponse;
    try {
      r = await send(server, req);
    } catch (err) {
      throw new Error(
        `seed ${SEED}, ${what}: ${(err as Error).message}\nrequest: ${JSON.stringify({ ...req, body: req.body?.toString('latin1') })}`,
      );
    }
    const context = `seed ${SEED}, ${what}: ${req.method ?? 'GET'} ${req.path} ${JSON.stringify(req.body?.toString('latin1') ?? '')} -> ${r.status} ${r.text}`;
    assert.ok(ok.includes(r.status), context);
    if (r.status >= 400) assert.equal(await snapshot(), before, `a refused request changed the store: ${context}`);
    return r;
  }

  it(`${ROUNDS.post} mutated POST /plants bodies`, async () => {
    for (let i = 0; i < ROUNDS.post; i++) {
      const valid = `{"id":${1000 + i},"name":"${pick(['Monstera', 'Fern 🌿', 'a', 'café'])}"${rand() < 0.5 ? ',"tag":"t"' : ''}}`;
      const type = rand() < 0.85 ? 'application/json' : pick(TYPES);
      await check(
        `POST #${i}`,
        {
          method: 'POST',
          path: '/plants',
          headers: { ...auth, ...(type && { 'content-type': type }) },
          body: mutate(valid),
        },
        [200, 400, 409, 413, 415],
      );
    }
  });

  it(`${ROUNDS.put} mutated PUT /plants/{id} bodies and paths`, async () => {
    for (let i = 0; i < ROUNDS.put; i++) {
      const id = rand() < 0.6 ? String(1 + int(3)) : fuzzValue();
      const body = rand() < 0.8 ? mutate(`{"name":"renamed ${i}","tag":"x"}`) : Buffer.from('{"name":"ok"}');
      await check(
        `PUT #${i}`,
        {
          method: 'PUT',
          path: `/plants/${id}`,
          headers: { ...auth, 'content-type': 'application/json' },
          body,
        },
        [200, 400, 404, 405, 413, 414, 415],
      );
    }
  });

  it(`${ROUNDS.path} fuzzed GET /plants/{id} paths`, async () => {
    for (let i = 0; i < ROUNDS.path; i++) {
      await check(`GET path #${i}`, { path: `/plants/${fuzzValue()}`, headers: auth }, [200, 400, 404, 405, 414]);
    }
  });

  it(`${ROUNDS.query} fuzzed GET /plants query strings`, async () => {
    for (let i = 0; i < ROUNDS.query; i++) {
      const params = Array.from(
        { length: int(4) },
        () => `${pick(['limit', 'after', 'LIMIT', 'x', 'limit', 'after', 'limit%00'])}=${fuzzValue()}`,
      );
      await check(
        `GET query #${i}`,
        { path: `/plants?${params.join(pick(['&', '&', ';', '&&']))}`, headers: auth },
        [200, 400],
      );
    }
  });

  it('the app is alive and the seeded plants answer', async () => {
    assert.equal((await send(server, { path: '/healthz' })).status, 200);
    const r = await send(server, {
      method: 'POST',
      path: '/plants',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"id":999999,"name":"after the fuzz"}',
    });
    assert.equal(r.status, 200, r.text);
  });
});
