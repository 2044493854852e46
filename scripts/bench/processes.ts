import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * The environment and flags `npm start` gives Node (`NAME=value exec node <flags>
 * dist/cli/main.js serve`): the service runs as users run it.
 */
const { NODE_ENV_SET, NODE_FLAGS } = ((start: string) => {
  const words = start.split(/\s+/);
  const node = words.indexOf('node');
  const set = words.slice(0, node).filter((w) => /^[A-Z_]+=/.test(w));
  return {
    NODE_ENV_SET: Object.fromEntries(set.map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)])),
    NODE_FLAGS: words.slice(node + 1, words.indexOf('dist/cli/main.js')),
  };
})((JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } }).scripts.start);

export interface Running {
  url: string;
  proc: ChildProcess;
  /** Milliseconds from spawn to the "listening" log line. */
  readyMs: number;
  stop(): Promise<void>;
  rssMb(): number;
  loopDelay(): Promise<{ p50: number; p99: number; max: number; gc: Collections } | undefined>;
  resetLoopDelay(): void;
  /** What its loads have shown of its state (services only: the loop probe counts collections). */
  state: ServerState;
}

/** V8's collections during a load, as the loop probe counts them. */
export interface Collections {
  scavenges: number;
  scavengeMs: number;
  fullCollections: number;
}

/** A service's signature over every load it took: docs/performance.md, "One state". */
export interface ServerState extends Collections {
  label: string;
  requests: number;
  /** µs of the server's CPU, summed over its requests. */
  cpuUs: number;
  peakRssMb: number;
}

/** Every service the bench started, in order, for the states table at the end (run.ts). */
export const servicesStarted: ServerState[] = [];

/**
 * Starts the built service (`plant-store serve`) on an ephemeral port, with the loop probe
 * preloaded unless `probe` is false (start-up timing measures the service alone), and `flags`
 * for Node after those of `npm start` (scripts/bench/states.ts tries V8's).
 */
export function startService(env: Record<string, string>, probe = true, flags: string[] = []): Promise<Running> {
  const preload = probe ? ['--import', `${ROOT}scripts/bench/loop-probe.mjs`] : [];
  return start(
    [...NODE_FLAGS, ...flags, ...preload, `${ROOT}dist/cli/main.js`, 'serve', '--port', '0', '--host', '127.0.0.1'],
    // The per-token limit counted as always (its cost is part of every request) but never reached:
    // the reads of the replica section pass its 10,000 a second with the bench's one token.
    { ...NODE_ENV_SET, RATE_LIMIT_PER_WINDOW: '1000000000', ...env },
    probe,
  );
}

export function startBaseline(): Promise<Running> {
  return start([`${ROOT}scripts/bench/baseline-server.mjs`], {}, false);
}

/** An OTLP/HTTP collector that drops what it gets (`otlp-sink.mjs`), for the traces section. */
export function startOtlpSink(): Promise<Running> {
  return start([`${ROOT}scripts/bench/otlp-sink.mjs`], {}, false);
}

/**
 * The bare baseline with the store behind it (`bare-store-server.mjs`), started with the flags
 * and environment of `npm start`, as the service is.
 */
export function startBareStore(env: Record<string, string>): Promise<Running> {
  return start([...NODE_FLAGS, `${ROOT}scripts/bench/bare-store-server.mjs`], { ...NODE_ENV_SET, ...env }, false);
}

/** The feed's reference for idle streams (`bare-sse-server.mjs`), with the flags and environment of `npm start`. */
export function startBareStreams(): Promise<Running> {
  return start([...NODE_FLAGS, `${ROOT}scripts/bench/bare-sse-server.mjs`], NODE_ENV_SET, false);
}

async function start(args: string[], env: Record<string, string>, probed: boolean): Promise<Running> {
  const started = performance.now();
  const proc = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const lines = createInterface({ input: proc.stdout! });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      if (!line.includes('plant-store listening')) return;
      resolve((JSON.parse(line) as { url: string }).url);
    });
    proc.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  const readyMs = performance.now() - started;
  const store = env.DATABASE_URL?.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
  const state: ServerState = {
    label: `service #${servicesStarted.length + 1}, ${store}`,
    requests: 0,
    cpuUs: 0,
    peakRssMb: 0,
    scavenges: 0,
    scavengeMs: 0,
    fullCollections: 0,
  };
  if (probed) servicesStarted.push(state);
  // Keep draining stdout (one log line per request) so the server never blocks on a full pipe.
  proc.stdout!.resume();
  return {
    url,
    proc,
    readyMs,
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    },
    rssMb: () => rssMb(proc.pid!),
    resetLoopDelay: () => probed && proc.connected && proc.send('eld-reset'),
    async loopDelay() {
      if (!probed || !proc.connected) return undefined;
      proc.send('eld-report');
      const [m] = (await once(proc, 'message')) as [
        { eld: { p50: number; p99: number; max: number }; gc: Collections },
      ];
      return { ...m.eld, gc: m.gc };
    },
    state,
  };
}

export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}
