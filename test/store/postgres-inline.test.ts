// A write batch's statements travel several to a simple-protocol query, with its BEGIN or its
// COMMIT, their parameters written as literals (src/store/postgres/inline.ts). Whatever a name or
// tag holds, PostgreSQL must read back exactly the values it reads when they are bound.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { inline, quoted } from '../../src/store/postgres/inline.js';
import { POSTGRES_URL, suiteOptions } from '../support/stores.js';

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

describe('a statement with its parameters inlined', () => {
  it('writes each parameter once, $10 apart from $1, and refuses values it cannot write', () => {
    const text = inline({ text: 'SELECT $1::bigint[], $10::text, $1::bigint[]', values: values('x') });
    assert.equal(
      text,
      `SELECT '{"1","-9223372036854775808","9223372036854775807"}'::bigint[], 'tenth'::text, '{"1","-9223372036854775808","9223372036854775807"}'::bigint[]`,
    );
    assert.throws(() => inline({ text: 'SELECT $2::text', values: ['only one'] }), RangeError);
    assert.throws(() => inline({ text: 'SELECT $1::timestamptz', values: [new Date()] }), TypeError);
    assert.throws(() => inline({ text: 'SELECT $1::float8', values: [Number.NaN] }), TypeError);
  });

  it("quotes text exactly as pg's escapeLiteral does", () => {
    const samples = [...NAMES.filter((n) => n !== null), "'", '\\', "\\'", "''\\\\", 'a'.repeat(70_000) + "'\\"];
    for (let i = 0; i < 200; i++) {
      samples.push(Array.from({ length: 20 }, () => 'ab\'\\" {},'.charAt(Math.floor(Math.random() * 9))).join(''));
    }
    for (const text of samples) assert.equal(quoted(text), pg.escapeLiteral(text), JSON.stringify(text));
  });

  describe('on PostgreSQL [postgres]', suiteOptions('postgres'), () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    before(() => client.connect());
    after(() => client.end());

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
