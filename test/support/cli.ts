import { spawnSync } from 'node:child_process';
import { CLI } from './server.js';

export interface CliResult {
  status: number | null;
  /** The signal that ended the command, if one did (its time limit ran out: SIGTERM). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `plant-store <args>` against a store, the way an operator would. */
export function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  input?: string,
  cwd?: string,
  timeoutMs = 30_000,
): CliResult {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: merged as NodeJS.ProcessEnv,
    input,
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}
