import { CliExit, type CliIo } from './io.js';

/** Every command ends a failure the same way: one line on stderr (`plant-store: …`), non-zero exit. */
export function fail(message: string, code = 1): never {
  throw new CliExit(code, message);
}

/**
 * Characters that would break a failure's one line, or act on the terminal rather than show:
 * controls (a newline, an escape sequence), line and paragraph separators, direction overrides.
 */
const UNSHOWABLE = /[\p{Cc}\p{Zl}\p{Zp}\u202a-\u202e\u2066-\u2069]/gu;

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** The most of a failure's line shown: an argument of 100,000 characters was quoted back whole. */
const MOST = 1000;

/**
 * A failure as one line: what it quotes back (an argument, a driver's message) shown as escapes,
 * cut after MOST characters (never between the two halves of a surrogate pair).
 */
export function oneLine(text: string): string {
  const line = text.replace(UNSHOWABLE, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (line.length <= MOST) return line;
  const end = /[\uDC00-\uDFFF]/.test(line.charAt(MOST)) ? MOST - 1 : MOST;
  return `${line.slice(0, end)}… (${line.length - end} more characters)`;
}

/** A `--json` listing: one JSON document (an array), as gh, kubectl and npm print, on one line. */
export function printJson(io: CliIo, items: unknown[]): void {
  io.stdout.write(`${JSON.stringify(items)}\n`);
}

/**
 * What a closed pipe means on a stream whose whole content is its command's product (a backup,
 * an export, a secret shown once): the line that says so, and what the operator can do about it.
 */
const onClosedPipe = new WeakMap<object, string>();

/**
 * Says that what a command writes to `stream` is its product (`the backup`): a reader that stops
 * early holds a truncated copy, so a closed pipe there fails the command.
 */
export function outputIsTheProduct(stream: object, what: string, remedy?: string): void {
  onClosedPipe.set(stream, `the output was closed before ${what} was complete${remedy ? `; ${remedy}` : ''}`);
}

/**
 * A closed pipe (`plant-store token list | head -1`) ends the process quietly, with the status it
 * would have had: the reader has what it wanted. Where the output is the product (`backup | …`),
 * it ends it with status 1 and one line instead: the reader did not get it all. Any other failure
 * to write stdout is reported too.
 */
export function quietOnClosedPipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    const closed = err.code === 'EPIPE' ? onClosedPipe.get(stream) : undefined;
    if (err.code === 'EPIPE' && closed === undefined) process.exit();
    process.stderr.write(`plant-store: ${closed ?? `cannot write the output: ${err.message}`}\n`);
    process.exit(1);
  });
}
