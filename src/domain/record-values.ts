// Values the records of tokens and webhook endpoints hold, checked the same way wherever one is
// made: by the command that creates it and by a restore that brings it back from a backup.

/** A field of a record and what is wrong with it (`must …`), to be put after the field's name. */
export interface FieldProblem<T> {
  field: keyof T & string;
  problem: string;
}

/**
 * Control characters (NUL among them: PostgreSQL's text cannot hold it), line and paragraph
 * separators, lone surrogates, and noncharacters (which a backup's I-JSON reader refuses, so a
 * name holding one could be backed up but never restored).
 */
const NOT_IN_A_LINE = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\p{Noncharacter_Code_Point}]/u;

/**
 * Why `text` is not a short line a person writes and reads back in a listing (a token's name, the
 * reason an endpoint was disabled), or undefined: 1 to `max` characters (code points, as JSON
 * Schema's maxLength counts them), printable, valid Unicode, no white space at either end.
 */
export function lineProblem(text: string, max: number): string | undefined {
  let length = 0;
  for (const _ of text) if (++length > max) break;
  if (length < 1 || length > max) return `must be 1 to ${max} characters`;
  if (NOT_IN_A_LINE.test(text)) {
    return 'must be one line of printable text (no control character such as NUL, tab or newline, no noncharacter)';
  }
  if (text.trim() !== text) return 'must not begin or end with white space';
  return undefined;
}

/** The last moment ISO 8601's four-digit years reach, as a backup writes times. */
const LAST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Why `time` is not one a record can hold, or undefined. Records are stamped by the clock, so
 * nothing before 1970 (PostgreSQL refuses year 0 outright; SQLite would keep it).
 */
export function timeProblem(time: Date): string | undefined {
  const ms = time.getTime();
  return ms >= 0 && ms <= LAST_TIME ? undefined : 'must be a time from 1970-01-01T00:00:00.000Z to year 9999';
}
