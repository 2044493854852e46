import type { IncomingHttpHeaders } from 'node:http';
import autocannon from 'autocannon';
import { cpuPerRequest, cpuSample, type CpuPerRequest } from './cpu.js';
import type { Running } from './processes.js';
import { median } from './report.js';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  peakRssMb: number;
  loopP99?: number;
  /** µs of CPU per request: the server's, the load generator's, the database's (PostgreSQL loads). */
  cpu: CpuPerRequest;
}

export interface LoadSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** Called for every request: its path and body, and its headers when they are not `headers`. */
  next: () => { path: string; body?: string; headers?: Record<string, string> };
  seconds: number;
  connections: number;
  /** Count PostgreSQL's CPU too (its loads); otherwise it is left out as another section's. */
  database?: boolean;
  /** Requests per second across all connections, when the load is paced rather than as fast as it goes. */
  rate?: number;
  /** Called with every answer's status and headers (the feed section reads Change-Position). */
  onResponse?: (status: number, headers: IncomingHttpHeaders) => void;
  /**
   * False for a load whose requests are not plant-sized (1,000-creation batches): its collections
   * say nothing of the server's state, and the states table (report.ts) would read a batch's
   * garbage as the slow state.
   */
  signature?: false;
}

/** Drives one server with autocannon, sampling its resident memory and event-loop delay meanwhile. */
export async function load(target: Running, spec: LoadSpec): Promise<LoadResult> {
  let peakRssMb = target.rssMb();
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, target.rssMb())), 200);
  target.resetLoopDelay();
  try {
    const before = cpuSample(target.proc.pid, spec.database);
    const r = await autocannon({
      url: target.url,
      connections: spec.connections,
      duration: spec.seconds,
      ...(spec.rate !== undefined && { overallRate: spec.rate }),
      requests: [
        {
          method: spec.method,
          headers: spec.headers,
          setupRequest: (req) => ({ ...req, ...spec.next() }),
          ...(spec.onResponse && {
            onResponse: (status: number, _body: string, _context: object, headers?: IncomingHttpHeaders) =>
              spec.onResponse!(status, headers ?? {}),
          }),
        },
      ],
    });
    const cpu = cpuPerRequest(before, cpuSample(target.proc.pid, spec.database), r.requests.total);
    const loop = await target.loopDelay();
    if (loop && spec.signature !== false) {
      const st = target.state;
      st.requests += r.requests.total;
      st.cpuUs += cpu.server * r.requests.total;
      st.peakRssMb = Math.max(st.peakRssMb, peakRssMb);
      st.scavenges += loop.gc.scavenges;
      st.scavengeMs += loop.gc.scavengeMs;
      st.fullCollections += loop.gc.fullCollections;
    }
    return {
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      errors: r.errors + r.timeouts,
      non2xx: r.non2xx,
      peakRssMb,
      cpu,
      ...(loop && { loopP99: loop.p99 }),
    };
  } finally {
    clearInterval(sampler);
  }
}

/** One-second slices of a load as one result: rates averaged, latencies and CPU by median. */
export function merged(r: LoadResult[]): LoadResult {
  return {
    rps: r.reduce((sum, x) => sum + x.rps, 0) / r.length,
    p50: median(r.map((x) => x.p50)),
    p99: median(r.map((x) => x.p99)),
    errors: r.reduce((sum, x) => sum + x.errors, 0),
    non2xx: r.reduce((sum, x) => sum + x.non2xx, 0),
    peakRssMb: Math.max(...r.map((x) => x.peakRssMb)),
    cpu: {
      server: median(r.map((x) => x.cpu.server)),
      loadGen: median(r.map((x) => x.cpu.loadGen)),
      ...(r.every((x) => x.cpu.database !== undefined) && { database: median(r.map((x) => x.cpu.database!)) }),
      others: median(r.map((x) => x.cpu.others)),
      idle: median(r.map((x) => x.cpu.idle)),
    },
    ...(r.every((x) => x.loopP99 !== undefined) && { loopP99: Math.max(...r.map((x) => x.loopP99!)) }),
  };
}

/** The columns of a load's line, after its label. */
export const COLUMNS = [
  'req/s',
  'p50 ms',
  'p99 ms',
  'errors',
  'non-2xx',
  'RSS MiB',
  'loop p99 ms',
  'CPU us/req: server',
  'load gen',
  'database',
  'others',
  'idle %',
];

/** A load's line in a benchmark's table (columns: COLUMNS). */
export const row = (label: string, r: LoadResult) => [
  label,
  r.rps,
  r.p50,
  r.p99,
  r.errors,
  r.non2xx,
  r.peakRssMb,
  r.loopP99 ?? '-',
  r.cpu.server,
  r.cpu.loadGen,
  r.cpu.database ?? '-',
  r.cpu.others,
  r.cpu.idle * 100,
];
