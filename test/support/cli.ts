import { spawnSync } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { runProgram } from '../../src/cli/program.js';
import { CLI } from './server.js';

export interface CliResult {
  status: number | null;
  /** The signal that ended the command, if one did (its time limit ran out: SIGTERM). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

type CliEnv = Record<string, string | undefined>;

function mergedEnv(env: CliEnv): NodeJS.ProcessEnv {
  const merged: CliEnv = { ...process.env, ...env };
  for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
  return merged as NodeJS.ProcessEnv;
}

/**
 * Runs `plant-store <args>` in this process: the same program as the command, with the test's
 * bytes as stdin and stdout and stderr collected. For what a command does, not how a process
 * behaves: that is `runCli`.
 */
export async function cli(args: string[], env: CliEnv = {}, input?: string | Buffer): Promise<CliResult> {
  const collector = () => {
    const chunks: Buffer[] = [];
    const stream = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    });
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const stdout = collector();
  const stderr = collector();
  const status = await runProgram(args, {
    env: mergedEnv(env),
    stdin: Readable.from(input === undefined ? [] : [Buffer.from(input)]),
    stdout: stdout.stream,
    stderr: stderr.stream,
  });
  return { status, signal: null, stdout: stdout.text(), stderr: stderr.text() };
}

/**
 * Runs the built `plant-store <args>` as its own process, the way an operator would: for what
 * only a process shows (its exit on a closed pipe, its memory, its start-up, its working
 * directory).
 */
export function runCli(args: string[], env: CliEnv = {}, input?: string, cwd?: string, timeoutMs = 30_000): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: mergedEnv(env),
    input,
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}
