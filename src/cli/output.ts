/** Every command ends a failure the same way: one line on stderr, non-zero exit. */
export function fail(message: string, code = 1): never {
  process.stderr.write(`plant-store: ${message}\n`);
  process.exit(code);
}

/** A `--json` listing: one JSON document (an array), as gh, kubectl and npm print, on one line. */
export function printJson(items: unknown[]): void {
  process.stdout.write(`${JSON.stringify(items)}\n`);
}

/**
 * A closed pipe (`plant-store token list | head -1`) ends a command quietly: the reader has what
 * it wanted. Any other failure to write stdout is still reported.
 */
export function quietOnClosedPipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit();
    fail(`cannot write the output: ${err.message}`);
  });
}
