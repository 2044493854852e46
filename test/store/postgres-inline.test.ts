// A write batch's statements travel several to a simple-protocol query, with its BEGIN or its
// COMMIT, their parameters written as literals (src/store/postgres/inline.ts). Whatever a name or
// tag holds, PostgreSQL must read back exactly the values it reads when they are bound.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { inline, quoted } from '../../src/store/postgres/inline.js';
import { prng, testSeed, withSeed } from '../support/seed.js';
import { POSTGRES_URL, suiteOptions } from '../support/stores.js';

/** The random samples below are drawn from it (TEST_SEED=<n> replays them). */
const SEED = testSeed();
const random = prng(SEED);

const STATEMENT = `SELECT $1::bigint[] AS ids, $2::text[] AS names, $3::text AS one, $4::bigint AS n,
  coalesce($5::text, $6::text, $7::text, $8::text, $9::text) AS nulls, $10::text AS ten`;

/** Names that would break a literal written naively: quotes, backslashes, array syntax, NULL spelt out. */
const NAMES = [
  "O'Brien's fern",
  'back\\slash \\" and \\\\',
  '{braces}, "quotes", commas',
  'NULL',
  '',
  ' spaced ',
  'Ünïcödé 🌿 名前',
  "'); DROP TABLE plants; --",
  '$1 $2 $$ dollar $tag$',
  // The dollar quotes' own tag (inline.ts), inside and at the end, whole or but its last `$`.
  'a $value$ b',
  'ends with $value',
  'ends with $value$',
  '$value',
  'line\nbreak\ttab',
  null,
];

const values = (one: string) => [
  ['1', '-9223372036854775808', '9223372036854775807'],
  NAMES,
  one,
  9007199254740993n,
  null,
  null,
  null,
  null,
  null,
  'tenth',
];

describe(`a statement with its parameters inlined (seed ${SEED})`, () => {
  it('writes each parameter once, $10 apart from $1, and refuses values it cannot write', () => {
    const text = inline({ text: 'SELECT $1::bigint[], $10::text, $1::bigint[]', values: values('x') });
    assert.equal(
      text,
      'SELECT $value${"1","-9223372036854775808","9223372036854775807"}$value$::bigint[], $value$tenth$value$::text, $value${"1","-9223372036854775808","9223372036854775807"}$value$::bigint[]',
    );
    assert.throws(() => inline({ text: 'SELECT $2::text', values: ['only one'] }), RangeError);
    assert.throws(() => inline({ text: 'SELECT $1::timestamptz', values: [new Date()] }), TypeError);
    assert.throws(() => inline({ text: 'SELECT $1::float8', values: [Number.NaN] }), TypeError);
    assert.throws(() => inline({ text: 'SELECT $1::text', values: [undefined] }), TypeError);
    assert.throws(() => inline({ text: 'SELECT $1::text[]', values: [['a', undefined]] }), TypeError);
    assert.throws(() => inline({ text: 'SELECT $1::boolean[]', values: [[true]] }), TypeError);
    assert.equal(
      inline({ text: 'SELECT $1, $2, $3::int[]', values: [true, false, [1, 2n]] }),
      'SELECT \'true\', \'false\', $value${"1","2"}$value$::int[]',
    );
  });

  it("quotes text exactly as pg's escapeLiteral does", () =>
    withSeed(SEED, () => {
      const samples = [...NAMES.filter((n) => n !== null), "'", '\\', "\\'", "''\\\\", 'a'.repeat(70_000) + "'\\"];
      for (let i = 0; i < 200; i++) {
        samples.push(Array.from({ length: 20 }, () => 'ab\'\\" {},'.charAt(Math.floor(random() * 9))).join(''));
      }
      for (const text of samples) assert.equal(quoted(text), pg.escapeLiteral(text), JSON.stringify(text));
    }));

  describe('on PostgreSQL [postgres]', suiteOptions('postgres'), () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    before(() => client.connect());
    after(() => client.end());

    it('types a literal by its place as a bound parameter is typed, and reads back the same rows', async () => {
      // Lone statements go inlined too (pool.ts): some type their parameters by a column, a
      // function or LIMIT, not by a cast; they bind booleans and arrays of numbers as well.
      const row = (id: string, on: boolean, n: number[]) => ({
        text: 'INSERT INTO t (id, on_, at, n, s) VALUES ($1, $2, $3, $4, $5)',
        values: [id, on, '2024-01-02T03:04:05.678Z', n, null],
      });
      const select = {
        text: `SELECT id, on_, at, n, s, coalesce(s, $1) AS c, coalesce(at, $5) AS at2 FROM t
               WHERE id >= $2 AND on_ = $3 AND $6 = 'x' ORDER BY id LIMIT $4`,
        values: ['none', '-1', false, 5, '2020-01-01T00:00:00Z', 'x'],
      };
      await client.query('BEGIN');
      try {
        await client.query(
          'CREATE TEMP TABLE t (id bigint, on_ boolean, at timestamptz, n int[], s text) ON COMMIT DROP',
        );
        await client.query(row('9007199254740993', false, [1, -2, 2147483647]));
        await client.query(inline(row('9007199254740995', false, [3])));
        await client.query(inline(row('1', true, [])));
        const bound = await client.query(select);
        const inlined = await client.query(inline(select));
        assert.equal(bound.rows.length, 2);
        assert.deepEqual(inlined.rows, bound.rows);
        assert.deepEqual(
          bound.rows.map((r) => [r.id, r.n]),
          [
            ['9007199254740993', [1, -2, 2147483647]],
            ['9007199254740995', [3]],
          ],
        );
      } finally {
        await client.query('ROLLBACK');
      }
    });

    it('reads back arrays of any strings and nulls as binding reads them', () =>
      withSeed(SEED, async () => {
        // Arrays are written from their JSON when it holds no escape but \" and \\ (inline.ts),
        // element by element otherwise: random arrays of awkward characters go both ways.
        const chars = ['a', 'é', '🌿', '"', '\\', "'", '{', '}', ',', ' ', '\n', '\u0001', '\ud800', 'n', 'u', 'N'];
        const pick = () => chars[Math.floor(random() * chars.length)]!;
        const arrays: (string | null)[][] = [
          NAMES.filter((n) => n === null || !/[\n\t]/.test(n)),
          NAMES,
          ['NULL', null],
        ];
        for (let i = 0; i < 100; i++) {
          arrays.push(
            Array.from({ length: 6 }, (_, k) => (k === 5 && i % 2 ? null : Array.from({ length: 5 }, pick).join(''))),
          );
        }
        for (const names of arrays) {
          const query = { text: 'SELECT $1::text[] AS names', values: [names] };
          const bound = await client.query(query);
          const inlined = await client.query(inline(query));
          assert.deepEqual(inlined.rows, bound.rows, JSON.stringify(names));
        }
      }));

    for (const one of NAMES.filter((n) => n !== null)) {
      it(`reads back what binding reads: ${JSON.stringify(one)}`, async () => {
        const bound = await client.query({ text: STATEMENT, values: values(one) });
        const results = (await client.query(
          `BEGIN; ${inline({ text: STATEMENT, values: values(one) })}`,
        )) as unknown as pg.QueryResult[];
        await client.query('ROLLBACK');
        assert.equal(results.length, 2);
        assert.deepEqual(results[1]!.rows, bound.rows);
        assert.equal(results[1]!.rows[0].names.length, NAMES.length);
      });
    }
  });
});
