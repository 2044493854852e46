// CPU time per request, from /proc, for each load: the server's, the load generator's and the
// database's. On this two-core machine they share the cores, so their sum per request bounds
// what any server could reach, however it spread its work: a figure a ratio alone cannot show.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second, the unit of /proc's CPU times. */
export const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString()) || 100;
  } catch {
    return 100;
  }
})();

/** The fields of a /proc/<pid>/stat line after its command, whose name may hold spaces and ")". */
export function statFields(line: string): { comm: string; ppid: number; own: number; children: number } {
  const close = line.lastIndexOf(')');
  const comm = line.slice(line.indexOf('(') + 1, close);
  // After the command: state is field 3, so field n of proc(5) is at index n - 3.
  const f = line.slice(close + 2).split(' ');
  const at = (n: number) => Number(f[n - 3]);
  return { comm, ppid: at(4), own: at(14) + at(15), children: at(16) + at(17) };
}

function stat(pid: number | 'self') {
  try {
    return statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined; // it exited between the listing and the read
  }
}

/**
 * PostgreSQL's CPU so far, in ticks: its live processes, and the connections that have ended
 * (the postmaster waits for them, so /proc adds their time to its children's). Zero without it.
 */
function databaseTicks(): number {
  const procs = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => ({ pid: Number(d), s: stat(Number(d)) }))
    .filter((p) => p.s?.comm === 'postgres');
  const pids = new Set(procs.map((p) => p.pid));
  return procs.reduce((sum, p) => sum + p.s!.own + (pids.has(p.s!.ppid) ? 0 : p.s!.children), 0);
}

/** The machine's idle and total ticks, over all its cores. */
function machineTicks(): { idle: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: f[3]! + f[4]!, total: f.reduce((a, b) => a + b, 0) };
}

export interface CpuSample {
  /** When it was taken: performance.now(). */
  at: number;
  server: number;
  loadGen: number;
  database?: number;
  machine: { idle: number; total: number };
}

/**
 * The counters now. The load generator is this process (autocannon runs in it) and the children
 * it has waited for (pgbench); the server is `serverPid` with all its threads, if given; the
 * database is PostgreSQL's processes, if asked.
 */
export function cpuSample(serverPid?: number, database = false): CpuSample {
  const self = stat('self')!;
  return {
    at: performance.now(),
    server: serverPid === undefined ? 0 : (stat(serverPid)?.own ?? 0),
    loadGen: self.own + self.children,
    ...(database && { database: databaseTicks() }),
    machine: machineTicks(),
  };
}

/** Microseconds of CPU per request (or transaction) between two samples, and the machine's idle share. */
export interface CpuPerRequest {
  server: number;
  loadGen: number;
  /** Only for loads that counted it (PostgreSQL's). */
  database?: number;
  /** The rest of the machine's busy time: other processes, and the kernel's own work. */
  others: number;
  idle: number;
}

/** Seconds between two samples. */
export const elapsed = (before: CpuSample, after: CpuSample) => (after.at - before.at) / 1000;

export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): CpuPerRequest {
  const us = (ticks: number) => (ticks * 1e6) / TICKS / requests;
  const machine = after.machine.total - before.machine.total;
  const idle = after.machine.idle - before.machine.idle;
  const server = us(after.server - before.server);
  const loadGen = us(after.loadGen - before.loadGen);
  const database =
    after.database !== undefined && before.database !== undefined ? us(after.database - before.database) : undefined;
  return {
    server,
    loadGen,
    ...(database !== undefined && { database }),
    others: us(machine - idle) - server - loadGen - (database ?? 0),
    idle: machine > 0 ? idle / machine : NaN,
  };
}

/**
 * The most requests a second that `cores` cores could serve at this CPU per request, all of it
 * (server, load generator, database) kept busy and spread perfectly: what no design of the
 * server can pass on this machine without spending less CPU per request.
 */
export function ceilingRps(cpu: CpuPerRequest, cores: number): number {
  return (cores * 1e6) / (cpu.server + cpu.loadGen + (cpu.database ?? 0));
}
