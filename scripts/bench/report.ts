import { availableParallelism } from 'node:os';
import { ceilingRps, type CpuPerRequest } from './cpu.js';

/** Prints rows as an aligned plain-text table. */
export function table(header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  const line = (r: (string | number)[]) => r.map((c, i) => String(c).padStart(widths[i]!)).join('  ');
  console.log(line(cells[0]!));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
}

export function fmt(n: number): string {
  if (!Number.isFinite(n)) return '-';
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Bytes in a MiB over bytes in a MB: /proc gives kibibytes, the target (PRODUCT.md) is in MB. */
export const MB_PER_MIB = 2 ** 20 / 1e6;

/**
 * A summary line for a peak RSS, read in MiB: in MiB as measured and in MB as the target is
 * written (under 150 MB, about 143 MiB), marked when it is not under it.
 */
export function peakRss(label: string, mib: number): string {
  const mb = mib * MB_PER_MIB;
  return `\n${label}: ${fmt(mib)} MiB = ${fmt(mb)} MB  (target < 150 MB)${mb < 150 ? '' : '  NOT MET'}`;
}

/**
 * A summary line: the CPU a load spent per request (median of rounds: the server, the load
 * generator and, where counted, the database), and the most its rate could be over the
 * reference's in the same round if all of it ran on `cores` cores kept busy: the bound no design
 * of the server passes on this machine without spending less CPU per request.
 */
export function cpuCeiling(
  label: string,
  results: { cpu: CpuPerRequest }[],
  referenceRps: number[],
  reference: string,
  cores = availableParallelism(),
): string {
  const loads = results.map((r) => r.cpu);
  const m = (part: (c: CpuPerRequest) => number) => fmt(median(loads.map(part)));
  const database = loads.every((c) => c.database !== undefined) ? ` + database ${m((c) => c.database!)}` : '';
  const ceiling = median(loads.map((c, k) => ceilingRps(c, cores) / referenceRps[k]!));
  // pgbench has no server: its client is the load generator.
  const server = loads.some((c) => c.server > 0) ? `server ${m((c) => c.server)} + ` : '';
  return (
    `\n${label} CPU per request: ${server}load generator ${m((c) => c.loadGen)}${database} us;` +
    ` at that, ${cores} cores kept busy would give at most ${fmt(ceiling)}x ${reference}`
  );
}

/**
 * A summary line for a figure with a target of PRODUCT.md: the figure, the target, and whether
 * it is met (`atLeast`: the figure must reach the target; otherwise it must not pass it).
 */
export function against(label: string, value: number, unit: string, limit: number, atLeast: boolean): string {
  // NaN (nothing measured) meets no target.
  const met = atLeast ? value >= limit : value <= limit;
  return `\n${label}: ${fmt(value)}${unit}  (target ${atLeast ? '>=' : '<='} ${fmt(limit)}${unit}: ${met ? 'met' : 'NOT MET'})`;
}

/**
 * Full collections per 10,000 requests past which a service is in the slow state: there it took
 * one every few hundred milliseconds under load (6–15 per 10,000 `POST`s), in the fast state
 * none or one in a whole section.
 */
export const SLOW_STATE_FULL_GCS = 1;

/**
 * The state each service of the run was in (docs/performance.md, "One state"): its CPU per
 * request over all its loads, its collections and peak memory; and a warning when the services
 * of one run were not all in the same state, since their ratios then compare two speeds.
 */
export function statesTable(
  services: {
    label: string;
    requests: number;
    cpuUs: number;
    peakRssMb: number;
    scavenges: number;
    scavengeMs: number;
    fullCollections: number;
  }[],
): void {
  const loaded = services.filter((s) => s.requests >= 10_000);
  if (loaded.length === 0) return;
  console.log('\n## The state of each service started (its loads together)\n');
  const per10k = (s: (typeof loaded)[number]) => (s.fullCollections * 10_000) / s.requests;
  table(
    ['service', 'requests', 'CPU µs/req', 'full GCs per 10k req', 'mean scavenge ms', 'peak RSS MiB'],
    loaded.map((s) => [
      s.label,
      s.requests,
      fmt(s.cpuUs / s.requests),
      fmt(per10k(s)),
      fmt(s.scavenges ? s.scavengeMs / s.scavenges : 0),
      fmt(s.peakRssMb),
    ]),
  );
  const slow = loaded.filter((s) => per10k(s) > SLOW_STATE_FULL_GCS);
  if (slow.length > 0 && slow.length < loaded.length) {
    console.log(
      `\nWARNING: ${slow.map((s) => s.label).join(', ')} ran in the slow state (full collections under load), the others not: ratios across them compare two speeds`,
    );
  } else if (slow.length > 0) {
    console.log('\nWARNING: every service ran in the slow state (full collections under load)');
  }
}
