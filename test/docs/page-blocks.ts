// The shell blocks of a page of the manual, as a reader meets them: each with what the page says
// about running it (the HTML comment on the line before it), cut into commands, each with the
// output the page shows for it. A comment right under a command (no blank line between) is its
// output; any other comment is prose.
import { execFileSync } from 'node:child_process';

export interface Step {
  command: string;
  /** The lines the page shows as its output (without their `# `), none when it shows none. */
  shows: string[];
}

export interface Block {
  /** Where it starts in the page (1-based), for messages. */
  line: number;
  /** `run`, `run in the background` (its output is the fenced block after it), or `not run: <why>`; undefined when unmarked. */
  mark: string | undefined;
  /** Its commands, when it is run. */
  steps: Step[];
  /** For a block run in the background: the lines of the next fenced block of the page. */
  then: string[];
}

const MARK = /^\s*<!-- (.+?) -->\s*$/;
const FENCE = /^(\s*)```(\w*)\s*$/;

export function shellBlocks(page: string): Block[] {
  const lines = page.split('\n');
  const fenced: { line: number; lang: string; body: string[]; mark: string | undefined }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const mark = before >= 0 ? MARK.exec(lines[before]!)?.[1] : undefined;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!.slice(open[1]!.length));
    fenced.push({ line: i - body.length, lang: open[2]!, body, mark });
  }
  return fenced.flatMap((block, k) =>
    block.lang === 'sh'
      ? [
          {
            line: block.line,
            mark: block.mark,
            // A block that is not run may hold what is no command here (`<tag>`, a path to fill in).
            steps: block.mark?.startsWith('run') ? stepsOf(block.body) : [],
            then: fenced[k + 1]?.body ?? [],
          },
        ]
      : [],
  );
}

function stepsOf(body: string[]): Step[] {
  const steps: Step[] = [];
  let pending: string[] = [];
  let underCommand = false;
  for (const line of body) {
    if (pending.length > 0 || !/^\s*(#|$)/.test(line)) {
      pending.push(line);
      if (complete(pending.join('\n'))) {
        steps.push({ command: pending.join('\n'), shows: [] });
        pending = [];
        underCommand = true;
      }
    } else if (line.trim() === '') underCommand = false;
    else if (underCommand) steps.at(-1)!.shows.push(line.replace(/^\s*# ?/, ''));
  }
  if (pending.length > 0) throw new Error(`a command that never ends:\n${pending.join('\n')}`);
  return steps;
}

/** Whether bash would take the text as whole commands (no open quote, continuation or here-document). */
function complete(text: string): boolean {
  if (text.endsWith('\\')) return false;
  // bash -n takes a here-document cut short for a whole one (it only warns).
  const lines = text.split('\n');
  for (const [at, open] of lines.entries()) {
    for (const [, word] of open.matchAll(/<<-?\s*['"]?(\w+)['"]?/g)) {
      if (!lines.slice(at + 1).some((l) => l.trim() === word)) return false;
    }
  }
  try {
    execFileSync('bash', ['-n'], { input: text, stdio: ['pipe', 'ignore', 'ignore'] });
    return true;
  } catch {
    return false;
  }
}
