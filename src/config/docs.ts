import { SETTINGS } from './settings.js';

type Row = (typeof SETTINGS)[keyof typeof SETTINGS];

/** The default as docs/reference/settings.md and `--help` write it. */
export function shownDefault(s: Row): string {
  if (s.shown !== undefined) return s.shown;
  return `\`${String(s.default)}\``;
}

/** The settings table of docs/reference/settings.md, in Markdown, one row per setting, in the table's order. */
export function settingsMarkdown(): string {
  const rows = Object.values(SETTINGS).map((s: Row) => {
    const flag = s.flag ? `; \`serve ${s.flag.split(' ')[0]}\`` : '';
    return [`\`${s.env}\``, `${s.doc}${flag}`, shownDefault(s)];
  });
  const header = ['Setting', 'Meaning', 'Default'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** `serve --help`'s words for one flag: the doc, and what it falls back to. */
export function flagHelp(s: Row): string {
  return `${s.doc.replace(/`/g, '')} (default: $${s.env} or ${shownDefault(s).replace(/`/g, '')})`;
}
