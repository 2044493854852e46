/** Every command ends a failure the same way: one line on stderr, non-zero exit. */
export function fail(message: string, code = 1): never {
  process.stderr.write(`plant-store: ${message}\n`);
  process.exit(code);
}
