import type { Readable, Writable } from 'node:stream';

/**
 * What a command reads and writes: the process's own streams and environment when `plant-store`
 * runs, collected ones when a test runs a command in its own process.
 */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable;
}

/**
 * Ends a command with an exit status, and with one line on stderr when it has a message. Thrown,
 * not `process.exit`: the store a command opened is closed on the way out.
 */
export class CliExit extends Error {
  constructor(
    readonly code: number,
    message = '',
  ) {
    super(message);
  }
}
