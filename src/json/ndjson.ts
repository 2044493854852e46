// NDJSON, one JSON text a line, read the one way every command reads it (`import`, `restore`).
// The rules: a line ends at LF, and a CR just before the LF belongs to the ending (CRLF files
// read like LF files); a last line without its LF counts, and a CR at the very end is dropped
// with it. Only the current line is held, and not even that once it passes the caller's limit:
// such a line is reported as too long, as soon as it is, and its rest skipped; the input as a
// whole has no limit, as it is never held. A blank line (JSON's white space only) is reported as
// blank: each command says what it means. Each line's bytes go to the JSON reader of request
// bodies, which decides whether they are UTF-8 (a byte order mark, invalid UTF-8, a lone
// surrogate or a noncharacter make the line invalid, never a replaced character). A failing
// input fails the reading: its error comes out after the lines before it.
import { JsonReadError, readJson } from './read-json.js';

const LF = 0x0a;
const CR = 0x0d;

/** A line as read: its bytes (or, from a caller that has it, its text) without its ending. */
export interface Line {
  content: Uint8Array | string;
  /** '' for the last line of an input that does not end with LF. */
  ending: '\n' | '\r\n' | '';
}

/** A line longer than the limit: at least this many bytes of it were counted, none kept. */
export interface LineTooLong {
  tooLong: number;
}

/** A line given to `readLines`: as `splitLines` yields it, or its bytes or text alone. */
export type NdjsonLine = Line | LineTooLong | Uint8Array | string;

/** What a line holds. `number` counts every line from 1, blank and invalid ones too. */
export type NdjsonEntry =
  | { kind: 'value'; number: number; value: unknown; read: Line }
  | { kind: 'blank'; number: number; read: Line }
  /** `read` is absent when the line was too long to keep. */
  | { kind: 'invalid'; number: number; message: string; read?: Line };

/** How a problem of one line is told, by every command that reads lines. */
export const atLine = (number: number, message: string): string => `line ${number}: ${message}`;

/** The input's lines, in order; a line longer than `maxBytes` (its ending left out) is only counted. */
export async function* splitLines(
  input: AsyncIterable<Uint8Array | string>,
  maxBytes: number,
): AsyncGenerator<Line | LineTooLong> {
  let parts: Uint8Array[] = [];
  let size = 0;
  // Skipping the rest of a line already reported as too long.
  let skipping = false;
  const finish = (ending: '\n' | ''): Line | LineTooLong => {
    const seen = size;
    const line = seen > maxBytes + 1 ? undefined : parts.length === 1 ? parts[0]! : Buffer.concat(parts, seen);
    parts = [];
    size = 0;
    if (line === undefined) return { tooLong: seen };
    const cr = line.length > 0 && line[line.length - 1] === CR;
    const content = cr ? line.subarray(0, line.length - 1) : line;
    if (content.length > maxBytes) return { tooLong: content.length };
    return { content, ending: cr && ending === '\n' ? '\r\n' : ending };
  };
  for await (const data of input) {
    const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(LF, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!skipping) {
        size += end - start;
        // Room for one CR past the limit, which may be a CRLF's; beyond that the line is only counted.
        if (size <= maxBytes + 1) parts.push(chunk.subarray(start, end));
      }
      if (nl === -1) break;
      if (skipping) skipping = false;
      else yield finish('\n');
      start = nl + 1;
    }
    // Too long with its end not yet in sight: said now, so that a reader that stops at the first
    // problem (restore) stops here, rather than after a line without end.
    if (size > maxBytes + 1) {
      yield finish('');
      skipping = true;
    }
  }
  if (size > 0) yield finish('');
}

/** JSON's white space only, or nothing. */
function isBlank(content: Uint8Array | string): boolean {
  if (typeof content === 'string') return /^[ \t\r\n]*$/.test(content);
  return content.every((b) => b === 0x20 || b === 0x09 || b === CR || b === LF);
}

const byteLength = (content: Uint8Array | string) =>
  typeof content === 'string' ? Buffer.byteLength(content) : content.length;

/**
 * What each line holds: a JSON value, a blank, or why it is invalid (a line longer than
 * `maxLineBytes`, or the JSON reader's reason).
 */
export async function* readLines(
  lines: AsyncIterable<NdjsonLine> | Iterable<NdjsonLine>,
  maxLineBytes?: number,
): AsyncGenerator<NdjsonEntry> {
  const tooLong = `line is larger than the limit${maxLineBytes === undefined ? '' : ` of ${maxLineBytes} bytes`}`;
  let number = 0;
  for await (const given of lines) {
    number++;
    const read: Line | LineTooLong =
      typeof given === 'string' || given instanceof Uint8Array ? { content: given, ending: '\n' } : given;
    if ('tooLong' in read || (maxLineBytes !== undefined && byteLength(read.content) > maxLineBytes)) {
      yield { kind: 'invalid', number, message: tooLong };
      continue;
    }
    if (isBlank(read.content)) {
      yield { kind: 'blank', number, read };
      continue;
    }
    let value: unknown;
    try {
      value = readJson(read.content);
    } catch (err) {
      if (!(err instanceof JsonReadError)) throw err;
      yield { kind: 'invalid', number, message: err.message, read };
      continue;
    }
    yield { kind: 'value', number, value, read };
  }
}

/** The lines of a byte stream, each read as JSON, none longer than `maxLineBytes`. */
export function readNdjson(
  input: AsyncIterable<Uint8Array | string>,
  maxLineBytes: number,
): AsyncGenerator<NdjsonEntry> {
  return readLines(splitLines(input, maxLineBytes), maxLineBytes);
}
