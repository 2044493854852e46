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
  return NEEDS_ESCAPE.test(v) ? `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"` : `"${v}"`;
}

/**
 * What pg's escapeLiteral writes (quotes doubled; with a backslash, an E'' string with backslashes
 * doubled), by two native replaces where it adds a character at a time: a batch of 1,000 plants
 * has arrays of tens of KB, which that loop took a tenth of the batch's CPU to write.
 */
export function quoted(text: string): string {
  const inner = text.replace(/'/g, "''");
  return text.includes('\\') ? ` E'${inner.replace(/\\/g, '\\\\')}'` : `'${inner}'`;
}

function literal(value: unknown): string {
  const v = value as Literal;
  if (v === null) return 'NULL';
  if (typeof v === 'string') return quoted(v);
  if (isNumeric(v)) return `'${v}'`;
  if (typeof v === 'boolean') return v ? "'true'" : "'false'";
  if (Array.isArray(v) && v.every((e) => e === null || typeof e === 'string' || isNumeric(e))) {
    return quoted(`{${v.map(element).join(',')}}`);
  }
  throw new TypeError(`an inlined statement cannot carry ${typeof value} values`);
}

/**
 * A statement with its parameters written in as quoted literals, for a simple-protocol query
 * that carries several statements in one round trip (a write batch's, or a lone statement with
 * its settings: pool.ts). A quoted literal is of unknown type until its place in the statement
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
