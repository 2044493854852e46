import type { Writable } from 'node:stream';

/** Columns padded to their widest cell. */
export function printTable(out: Writable, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) {
    out.write(
      `${row
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}
