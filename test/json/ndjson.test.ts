// The one NDJSON reader of `import` and `restore` (src/json/ndjson.ts): where lines end, what a
// line past the limit, a blank line, a CR, a missing final newline, invalid UTF-8 and a byte order
// mark become, and what happens when the input fails or the caller stops reading.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import {
  readLines,
  readNdjson,
  splitLines,
  type Line,
  type LineTooLong,
  type NdjsonEntry,
  type NdjsonLine,
} from '../../src/json/ndjson.js';

async function* chunksOf(chunks: (string | number[])[]): AsyncGenerator<Buffer> {
  for (const c of chunks) yield typeof c === 'string' ? Buffer.from(c) : Buffer.from(c);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function entries(chunks: (string | number[])[], max = 1000): Promise<NdjsonEntry[]> {
  return all(readNdjson(chunksOf(chunks), max));
}

/** An entry, shortly: its number with its value (as JSON), message or blank's text. */
const brief = (e: NdjsonEntry) =>
  e.kind === 'value'
    ? [e.number, JSON.stringify(e.value)]
    : e.kind === 'invalid'
      ? [e.number, e.message]
      : [e.number, 'blank', Buffer.from(e.read.content).toString('latin1')];

describe('splitLines', () => {
  const collect = (chunks: (string | number[])[], max = 1000) => all(splitLines(chunksOf(chunks), max));
  const text = (lines: (Line | LineTooLong)[]) =>
    lines.map((l) => ('content' in l ? Buffer.from(l.content).toString('latin1') : JSON.stringify(l)));

  it('splits on \\n across chunk boundaries, drops one \\r before it, keeps bytes as they are', async () => {
    assert.deepEqual(text(await collect(['ab', 'c\r', '\nd', [0xe9], '\n\n', 'e'])), ['abc', 'd\u00e9', '', 'e']);
    assert.deepEqual(text(await collect(['a\r\r\n'])), ['a\r']);
    assert.deepEqual(text(await collect(['a\n'])), ['a']);
    assert.deepEqual(text(await collect([])), []);
  });

  it('counts a line past the limit without keeping it', async () => {
    const lines = await collect(['12345', '67', '89\n', 'ok\n', '12345678\r\n', '123456789\r\n'], 8);
    assert.deepEqual(text(lines), ['{"tooLong":9}', 'ok', '12345678', '{"tooLong":10}']);
  });

  it('says how each line ended: LF, CR LF, or nothing at the end (a CR there dropped with it)', async () => {
    const endings = async (chunks: string[]) => (await collect(chunks)).map((l) => (l as Line).ending);
    assert.deepEqual(await endings(['a\nb\r\nc']), ['\n', '\r\n', '']);
    assert.deepEqual(await endings(['a\r', '\n', 'b\r']), ['\r\n', '']);
    assert.deepEqual(text(await collect(['a\r', '\n', 'b\r'])), ['a', 'b']);
  });

  it('reports a line past the limit as soon as it is, then skips its rest up to its LF', async () => {
    assert.deepEqual(text(await collect(['123456789012', '345\nok\n'], 8)), ['{"tooLong":12}', 'ok']);
    // An input that never ends and never has a LF: a reader that stops at the first problem
    // stops after about the limit, and the input is closed.
    let chunks = 0;
    let closed = false;
    async function* endless() {
      try {
        for (; chunks < 10_000; chunks++) yield Buffer.alloc(1024, 0x61);
        throw new Error('read 10 MiB of one line');
      } finally {
        closed = true;
      }
    }
    for await (const line of splitLines(endless(), 64 * 1024)) {
      assert.ok('tooLong' in line);
      break;
    }
    assert.ok(chunks <= 65, `${chunks} chunks read`);
    assert.ok(closed, 'the input was closed');
  });
});

describe('readLines and readNdjson', () => {
  it('numbers every line; values, blanks and invalid lines each say which they are', async () => {
    const got = await entries(['{"a":1}\n', '\n', ' \t\r\n', 'nope\n', '[1,\n', '"x"']);
    assert.deepEqual(got.map(brief), [
      [1, '{"a":1}'],
      [2, 'blank', ''],
      [3, 'blank', ' \t'],
      [4, "invalid JSON at position 0: expected a value but found 'n'"],
      [5, 'invalid JSON at position 3: expected a value but found end of input'],
      [6, '"x"'],
    ]);
    assert.equal((got[5] as { read: Line }).read.ending, '', 'the last line, without its newline');
  });

  it('reads CRLF lines as LF lines; a CR inside a line is the JSON reader’s', async () => {
    assert.deepEqual((await entries(['{"a":1}\r\n{"b":\r2}\r\n'])).map(brief), [
      [1, '{"a":1}'],
      [2, '{"b":2}'],
    ]);
    assert.match(brief((await entries(['"a\rb"\n']))[0]!)[1] as string, /^invalid JSON at position 2: /);
  });

  it('refuses what a request body may not hold: invalid UTF-8, a byte order mark, on any line', async () => {
    const got = await entries(['{}\n', [0xef, 0xbb, 0xbf], '{}\n', '"caf', [0xe9], '"\n', [0xef, 0xbb, 0xbf, 0x0a]]);
    assert.deepEqual(got.map(brief), [
      [1, '{}'],
      [2, 'invalid JSON at position 0: byte order mark is not allowed'],
      [3, 'invalid JSON: body is not valid UTF-8'],
      [4, 'invalid JSON at position 0: byte order mark is not allowed'],
    ]);
  });

  it('names the limit of a line too long, and goes on with the next', async () => {
    const got = await entries(['{"a":"', 'x'.repeat(40), '"}\r\n{"b":2}\n', '{"c":"xxxxxx"}'], 12);
    assert.deepEqual(got.map(brief), [
      [1, 'line is larger than the limit of 12 bytes'],
      [2, '{"b":2}'],
      [3, 'line is larger than the limit of 12 bytes'],
    ]);
    assert.equal((got[0] as { read?: Line }).read, undefined, 'nothing of it is kept');
  });

  it('takes lines given as text or bytes, and holds them to the limit too', async () => {
    const given: NdjsonLine[] = ['{"a":1}', Buffer.from('{"b":2}'), '{"long":1}', { tooLong: 99 }, '  '];
    assert.deepEqual((await all(readLines(given, 8))).map(brief), [
      [1, '{"a":1}'],
      [2, '{"b":2}'],
      [3, 'line is larger than the limit of 8 bytes'],
      [4, 'line is larger than the limit of 8 bytes'],
      [5, 'blank', '  '],
    ]);
    assert.deepEqual((await all(readLines([{ tooLong: 99 }]))).map(brief), [[1, 'line is larger than the limit']]);
  });

  it('reads nothing from an empty input', async () => {
    assert.deepEqual(await entries([]), []);
    assert.deepEqual(await entries(['']), []);
  });

  it('gives the lines read before an input that fails, then its error', async () => {
    async function* failing() {
      yield Buffer.from('{"a":1}\n{"b"');
      throw new Error('the pipe broke');
    }
    const seen: unknown[] = [];
    await assert.rejects(async () => {
      for await (const e of readNdjson(failing(), 100)) seen.push(brief(e));
    }, /the pipe broke/);
    assert.deepEqual(seen, [[1, '{"a":1}']]);

    // A stream closed before its end.
    const stream = new Readable({ read() {} });
    stream.push('{"a":1}\n{"b"');
    setTimeout(() => stream.destroy(), 10);
    seen.length = 0;
    await assert.rejects(async () => {
      for await (const e of readNdjson(stream, 100)) seen.push(brief(e));
    }, /Premature close/);
    assert.deepEqual(seen, [[1, '{"a":1}']]);
  });

  it('a last line cut short is invalid, and says it had no newline', async () => {
    const [, last] = await entries(['{"a":1}\n{"b":"cut']);
    assert.equal(last?.kind, 'invalid');
    assert.equal(last?.kind === 'invalid' && last.read?.ending, '');
  });

  it('closes the input when the reader stops early', async () => {
    const stream = Readable.from([Buffer.from('{"a":1}\n{"b":2}\n'), Buffer.from('{"c":3}\n')]);
    for await (const e of readNdjson(stream, 100)) {
      assert.equal(e.number, 1);
      break;
    }
    assert.ok(stream.destroyed);
  });
});
