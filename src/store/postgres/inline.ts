import type { QueryConfig } from 'pg';

/**
 * A value an inlined statement may carry: what the store's statements bind. Anything else (a
 * Date, an object, NaN) is refused rather than written as pg would have serialized it: the store
 * passes times as ISO strings or epoch numbers, so such a value is a mistake to find at once.
 */
type Scalar = string | number | bigint | boolean;
type Literal = Scalar | null | readonly (string | number | bigint | null)[];

/** A finite number or a bigint, in the decimal digits PostgreSQL reads (pg sends the same). */
const isNumeric = (v: unknown): v is number | bigint =>
  typeof v === 'bigint' || (typeof v === 'number' && Number.isFinite(v));

const NEEDS_ESCAPE = /[\\"]/;

/** One element of an array literal, as pg writes it for a bound array: quoted, `\` and `"` escaped. */
function element(v: string | number | bigint | null): string {
  if (v === null) return 'NULL';
  if (typeof v !== 'string') return `"${v}"`;
  // Most values (ids, plain names) have nothing to escape: tested, not rewritten.
  return NEEDS_ESCAPE.test(v) ? `"${v.replace(/[\\"]/g, '\\$&')}"` : `"${v}"`;
}

/**
 * What pg's escapeLiteral writes (quotes doubled; with a backslash, an E'' string with backslashes
 * doubled), by two native replaces where it adds a character at a time (a tenth of a batch's CPU
 * over its arrays of tens of KB): the form of a string that dollar quotes cannot hold.
 */
export function quoted(text: string): string {
  const inner = text.replace(/'/g, "''");
  return text.includes('\\') ? ` E'${inner.replace(/\\/g, '\\\\')}'` : `'${inner}'`;
}

/** Any escape of JSON's other than `\"` and `\\` (a control character's, a lone surrogate's). */
const OTHER_ESCAPE = /\\[^"\\]/;

/**
 * An array literal, as pg writes it for a bound array. A batch's arrays hold a thousand elements
 * each, and a regular expression's replace for each took milliseconds (a change's body has quotes
 * to escape). JSON writes strings as an array literal does (quoted, `"` and `\` escaped by a
 * backslash) and null as the literal's NULL, natively: its text is taken whenever it holds no
 * other escape (JSON's `\n` would be read back as `n`). It may refuse an array it could have
 * written (a name with a backslash before an `n`): that one is written element by element.
 */
function arrayLiteral(v: readonly unknown[]): string {
  if (v.every((e) => e === null || typeof e === 'string')) {
    const json = JSON.stringify(v);
    if (!OTHER_ESCAPE.test(json)) return `{${json.slice(1, -1)}}`;
  }
  if (v.every((e) => e === null || typeof e === 'string' || isNumeric(e))) {
    return `{${(v as readonly (string | number | bigint | null)[]).map(element).join(',')}}`;
  }
  throw new TypeError('an inlined statement cannot carry arrays of other values than strings, numbers and null');
}

/** The tag of the dollar quotes a string is written in: no escaping within them. */
const TAG = '$value$';

/**
 * A string as a literal: between dollar quotes, where nothing is escaped, unless the tag could
 * end it early (it holds the tag, or ends with all of it but its last `$`); then quoted. Quoting
 * a batch's array of changes (tens of KB with a backslash before every quote of their bodies)
 * took a replace of each backslash, half a millisecond; dollar quotes take a search for the tag.
 */
function stringLiteral(text: string): string {
  return text.includes(TAG) || text.endsWith(TAG.slice(0, -1)) ? quoted(text) : `${TAG}${text}${TAG}`;
}

function literal(value: unknown): string {
  const v = value as Literal;
  if (v === null) return 'NULL';
  if (typeof v === 'string') return stringLiteral(v);
  if (isNumeric(v)) return `'${v}'`;
  if (typeof v === 'boolean') return v ? "'true'" : "'false'";
  if (Array.isArray(v)) return stringLiteral(arrayLiteral(v));
  throw new TypeError(`an inlined statement cannot carry ${typeof value} values`);
}

/**
 * A statement with its parameters written in as literals (strings in dollar quotes), for a simple-protocol query
 * that carries several statements in one round trip (a write batch's, or a lone statement with
 * its settings: pool.ts). A string literal is of unknown type until its place in the statement
 * types it, as a parameter is: by the statement's cast (`$1::bigint[]`), its column
 * (`id > $1`, `VALUES ($1)` of an INSERT, `SET state = $1`) or its function (`LIMIT $1`,
 * `coalesce(revoked_at, $1)`). The text must hold no `$n` other than its parameters (none in a
 * string constant or a dollar-quoted body).
 */
export function inline(query: QueryConfig): string {
  const values = query.values ?? [];
  return query.text.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i >= values.length) throw new RangeError(`the statement has no value for $${n}`);
    return literal(values[i]);
  });
}
