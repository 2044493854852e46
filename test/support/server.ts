import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createTestStore, storeKindOf, type StoreKind } from './stores.js';

export const CLI = new URL('../../dist/cli/main.js', import.meta.url).pathname;

export interface ServerProcess {
  url: string;
  /** The bootstrap token registered through PLANT_STORE_TOKEN (all scopes). */
  token: string;
  store: StoreKind;
  /** The store it serves; pass it to another startServer to share it, or to runCli. */
  databaseUrl: string;
  proc: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  stdout: string[];
  stderr: string[];
  /** SIGTERM, wait for exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, wait for exit. */
  kill(): Promise<void>;
  /** Kill, and delete the store when this server created it. */
  dispose(): Promise<void>;
}

export interface StartOptions {
  /** A fresh store of this kind (a temporary SQLite file, or a PostgreSQL schema); sqlite by default. */
  store?: StoreKind;
  /** Serve an existing store instead (restarts, several instances): it outlives this server. */
  databaseUrl?: string;
  /** Serve the SQLite store in this directory (restart tests); it outlives this server. */
  dataDir?: string;
  /** Extra environment; `PLANT_STORE_TOKEN: undefined` removes the bootstrap token. */
  env?: Record<string, string | undefined>;
  token?: string;
  /** Listen on this port of 127.0.0.1 (a restart where the clients are); an ephemeral one by default. */
  port?: number;
  /** A command that runs the server under it (e.g. strace and its options). */
  wrapper?: string[];
  /** Its working directory (where the default DATABASE_URL, ./data/plant-store.db, is). */
  cwd?: string;
}

export function newToken(): string {
  return `pst_${randomBytes(32).toString('base64url')}`;
}

/** Starts the built server (`plant-store serve`) on an ephemeral port of 127.0.0.1. */
export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const shared = options.databaseUrl ?? (options.dataDir && `sqlite:${join(options.dataDir, 'plant-store.db')}`);
  const owned = shared ? undefined : createTestStore(options.store ?? 'sqlite');
  const databaseUrl = shared || owned!.databaseUrl;
  const token = options.token ?? newToken();
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PLANT_STORE_TOKEN: token,
    LOG_LEVEL: 'info',
    // As in the in-process helper: a busy test machine (four test processes, Chromium starting, the
    // VM paused for a moment) can hold any process's event loop past the bound, and requests of a
    // test about something else then got 503 "overloaded". test/http/overload.test.ts tests it.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...options.env,
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const argv = [process.execPath, CLI, 'serve', '--port', String(options.port ?? 0), '--host', '127.0.0.1'];
  const [command, ...args] = [...(options.wrapper ?? []), ...argv] as [string, ...string[]];
  const proc = spawn(command, args, {
    env: env as NodeJS.ProcessEnv,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: proc.stderr! }).on('line', (l) => stderr.push(l));
  // 'close': the process has exited and its output has all been read (a test may then look at all of it).
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 15 s\n${stderr.join('\n')}`)), 15_000);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      stdout.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'plant-store listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        /* not a log line */
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening\n${stderr.join('\n')}`));
    });
  });
  const url = await listening.catch(async (err: unknown) => {
    // A server that never came up leaves no process and no store behind.
    proc.kill('SIGKILL');
    await owned?.drop();
    throw err;
  });
  const server: ServerProcess = {
    url,
    token,
    store: storeKindOf(databaseUrl),
    databaseUrl,
    proc,
    stdout,
    stderr,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
    async dispose() {
      await server.kill();
      await owned?.drop();
    },
  };
  return server;
}

/** Starts several servers at once (instances starting together); if any fails, the others are stopped too. */
export async function startServers(options: StartOptions[]): Promise<ServerProcess[]> {
  const started = await Promise.allSettled(options.map((o) => startServer(o)));
  const failed = started.find((s) => s.status === 'rejected');
  if (!failed) return started.map((s) => (s as PromiseFulfilledResult<ServerProcess>).value);
  await Promise.all(started.map((s) => s.status === 'fulfilled' && s.value.dispose()));
  throw failed.reason;
}

/** Two instances of one store, started together with the same bootstrap token, as a deployment would. */
export async function startPair(databaseUrl: string, token: string): Promise<[ServerProcess, ServerProcess]> {
  return (await startServers([
    { databaseUrl, token },
    { databaseUrl, token },
  ])) as [ServerProcess, ServerProcess];
}
