import { CliExit, type CliIo } from './io.js';

/** Every command ends a failure the same way: one line on stderr (`plant-store: …`), non-zero exit. */
export function fail(message: string, code = 1): never {
  throw new CliExit(code, message);
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
