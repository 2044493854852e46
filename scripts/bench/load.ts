import autocannon from 'autocannon';
import type { Running } from './processes.js';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  peakRssMb: number;
  loopP99?: number;
}

export interface LoadSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** Called for every request: its path and body. */
  next: () => { path: string; body?: string };
  seconds: number;
  connections: number;
}

/** Drives one server with autocannon, sampling its resident memory and event-loop delay meanwhile. */
export async function load(target: Running, spec: LoadSpec): Promise<LoadResult> {
  let peakRssMb = target.rssMb();
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, target.rssMb())), 200);
  target.resetLoopDelay();
  try {
    const r = await autocannon({
      url: target.url,
      connections: spec.connections,
      duration: spec.seconds,
      requests: [
        {
          method: spec.method,
          headers: spec.headers,
          setupRequest: (req) => ({ ...req, ...spec.next() }),
        },
      ],
    });
    const loop = await target.loopDelay();
    return {
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      errors: r.errors + r.timeouts,
      non2xx: r.non2xx,
      peakRssMb,
      ...(loop && { loopP99: loop.p99 }),
    };
  } finally {
    clearInterval(sampler);
  }
}

/** A load's line in a benchmark's table (columns: see the tables' headers). */
export const row = (label: string, r: LoadResult) => [
  label,
  r.rps,
  r.p50,
  r.p99,
  r.errors,
  r.non2xx,
  r.peakRssMb,
  r.loopP99 ?? '-',
];
