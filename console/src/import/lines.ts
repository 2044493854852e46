// The lines of a file, read a chunk at a time from its stream: only the current chunk and the
// start of a line it cut are held, so a file of 100,000 plants never sits whole in the page.
// As the server's NDJSON reader: a line ends at LF, a CR before it belongs to the ending, and a
// last line without its LF counts.

export interface FileLine {
  /** From 1, blank lines included. */
  number: number;
  bytes: Uint8Array;
  /** How many bytes of the file lie before this line's end: its progress. */
  through: number;
}

const LF = 0x0a;
const CR = 0x0d;

const withoutCr = (line: Uint8Array) => (line.at(-1) === CR ? line.subarray(0, line.length - 1) : line);

function joined(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const both = new Uint8Array(a.length + b.length);
  both.set(a);
  both.set(b, a.length);
  return both;
}

/** Each line of the file in order, with the bytes of the file up to its end. */
export async function* fileLines(file: Blob): AsyncGenerator<FileLine> {
  const reader = file.stream().getReader();
  let rest: Uint8Array = new Uint8Array(0);
  let number = 0;
  let through = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = joined(rest, value);
    let start = 0;
    for (let end = chunk.indexOf(LF); end !== -1; end = chunk.indexOf(LF, start)) {
      through += end + 1 - start;
      yield { number: ++number, bytes: withoutCr(chunk.subarray(start, end)), through };
      start = end + 1;
    }
    rest = chunk.slice(start);
  }
  if (rest.length > 0) yield { number: ++number, bytes: withoutCr(rest), through: through + rest.length };
}
