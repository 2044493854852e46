// What differs between a page's run and what it shows, and how the two are matched. The page
// writes `…` for a value that differs from run to run (a token, an ETag, a time, an id), and
// positions as plain numbers of 13 digits or more: each is learnt from the output that first
// shows it, and put into the later commands that use it, as a reader copies it. A number the page
// has already used in a command (a plant's id) is no such value: it must come out as written.
// Ports are the test's own: each page runs on ports of its own, written in for the page's.

const WORD = /([\w-]*)…/g;
const NUMBER = /\b\d{13,}\b/g;
const PIECE = /([\w-]*…)|(\b\d{13,}\b)|(\b\d{4}-\d\d-\d\dT[\d:.]+Z\b)/g;
/** What the page writes after an output line to explain it: `(among the headers)`, `<- its id`. */
const NOTE = /^(.*?\S)\s{2,}(\(.*\)|<-.*)$/;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ +/g, ' +');

export class PageValues {
  private readonly words: { prefix: string; value: string }[] = [];
  private readonly numbers = new Map<string, string>();
  private readonly used = new Set<string>();

  constructor(private readonly ports: Record<string, number>) {}

  /** The command as the page writes it, with this run's ports and the values earlier outputs gave. */
  command(text: string): string {
    for (const n of text.match(NUMBER) ?? []) if (!this.numbers.has(n)) this.used.add(n);
    return this.port(text)
      .replace(NUMBER, (n) => this.numbers.get(n) ?? n)
      .replace(WORD, (_, prefix: string) => {
        const known = this.words.findLast((w) => w.prefix.startsWith(prefix));
        if (!known) throw new Error(`no output before this command shows the ${prefix}… it uses:\n${text}`);
        return known.value;
      });
  }

  /**
   * Whether the output is what the page shows (all of it, or, `anywhere`, somewhere in it); when
   * it is, the values it gives are learnt. A line followed by `(among …)` may be anywhere.
   */
  matches(shows: string[], output: string, anywhere = false): boolean {
    const captures: ({ prefix: string } | { number: string })[] = [];
    const groups = new Map<string, number>();
    const piece = (text: string) =>
      text
        .split(PIECE)
        .map((part, i) => {
          if (part === undefined || part === '') return '';
          if (i % 4 === 0) return escape(part);
          if (i % 4 === 1) {
            captures.push({ prefix: part.slice(0, -1) });
            return '([^\\s"\\\\]*)';
          }
          if (i % 4 === 3) return '[^"\\s]+';
          if (this.numbers.has(part)) return this.numbers.get(part)!;
          if (this.used.has(part)) return part;
          if (groups.has(part)) return `\\${groups.get(part)}`;
          groups.set(part, captures.push({ number: part }));
          return '(\\d+)';
        })
        .join('');
    const lines = shows.map((line) => {
      const noted = NOTE.exec(line);
      const [text, note] = noted ? [noted[1]!, noted[2]] : [line, undefined];
      const among = note?.includes('among') ?? false;
      const body = text.trim() === '...' ? '[\\s\\S]*?' : piece(this.port(text.trim()));
      return among ? `[\\s\\S]*?${body}[^\\n]*[\\s\\S]*?` : body;
    });
    const source = lines.join('\\s*');
    const match = new RegExp(anywhere ? source : `^\\s*${source}\\s*$`).exec(output);
    if (!match) return false;
    captures.forEach((c, i) => {
      if ('prefix' in c) this.words.push({ prefix: c.prefix, value: match[i + 1]! });
      else this.numbers.set(c.number, match[i + 1]!);
    });
    return true;
  }

  private port(text: string): string {
    return text.replace(/\b(\d{4})\b/g, (p) => String(this.ports[p] ?? p));
  }
}
