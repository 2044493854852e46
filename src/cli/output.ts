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
 * A closed pipe (`plant-store token list | head -1`) ends the process quietly: the reader has what
 * it wanted. Any other failure to write stdout is still reported.
 */
export function quietOnClosedPipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit();
    process.stderr.write(`plant-store: cannot write the output: ${err.message}\n`);
    process.exit(1);
  });
}
