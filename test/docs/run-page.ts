import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pollUntil } from '../support/poll.js';
import { shellBlocks, type Block } from './page-blocks.js';
import { PageValues } from './page-values.js';
import { Shell } from './shell.js';

export const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * A reader's terminal for some pages: a shell in the checkout (built, its packages installed, so
 * a page's `npm ci` has nothing to do), whose store is a file of its own rather than
 * ./data/plant-store.db, and whose port 3000 is a free one (so are the other ports `ports` maps).
 */
export async function openTerminal(
  ports: Record<string, number>,
): Promise<{ run: (page: string) => Promise<void>; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-reader-'));
  // `npm ci` is the one command a page runs that the test cannot: the checkout was installed before the test.
  writeFileSync(join(dir, 'npm'), `#!/bin/sh\n[ "$1" = ci ] && exit 0\nexec /usr/bin/npm "$@"\n`);
  chmodSync(join(dir, 'npm'), 0o755);
  const shell = new Shell(ROOT, {
    PATH: [dir, dirname(process.execPath), join(ROOT, 'node_modules/.bin'), process.env.PATH].join(':'),
    HOME: process.env.HOME ?? dir,
    LANG: 'C.UTF-8',
    DATABASE_URL: `sqlite:${join(dir, 'plant-store.db')}`,
    PORT: String(ports['3000']),
    // On this machine the page's server answers 127.0.0.1 only; a reader's listens on every interface.
    HOST: '127.0.0.1',
  });
  const values = new PageValues(Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, v])));
  return {
    run: async (page) => {
      for (const block of shellBlocks(readFileSync(join(ROOT, page), 'utf8')))
        await runBlock(shell, values, page, block);
    },
    close: async () => {
      await shell.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function runBlock(shell: Shell, values: PageValues, page: string, block: Block): Promise<void> {
  const where = `${page}:${block.line}`;
  if (block.mark?.startsWith('not run: ')) return;
  if (block.mark?.startsWith('run in the background')) {
    // `…, in place of the quick start's server`: that one is stopped first, as with Ctrl-C.
    if (block.mark.endsWith("in place of the quick start's server")) await shell.stop(shell.background.shift()!);
    // As in a terminal of its own: it runs on; what it prints is the fenced block the page shows next.
    const n = shell.start(values.command(block.steps.map((s) => s.command).join('\n')));
    const printed = () => Object.values(shell.output(n)).join('\n');
    const shown = await pollUntil(async () => values.matches(block.then, printed(), true), 20_000);
    assert.ok(shown, `${where}: it never printed\n${block.then.join('\n')}\n--- it printed:\n${printed()}`);
    return;
  }
  assert.equal(block.mark, 'run', `${where}: a shell block says whether it runs`);
  for (const step of block.steps) {
    const command = values.command(step.command);
    // A command takes a second or two alone; beside the suite's other processes on a 2-core machine
    // one step took over 45 s, so a step has two minutes before it counts as hung.
    const { stdout, stderr, status } = await shell.run(command, 120_000);
    const said = `${where}:\n${command}\n--- printed:\n${stdout}\n--- on stderr:\n${stderr}`;
    // curl's --max-time ends a stream the page shows a part of: status 28, the time was up.
    assert.ok(status === 0 || (status === 28 && /--max-time/.test(command)), `exit status ${status}, ${said}`);
    if (step.shows.length > 0) {
      assert.ok(
        values.matches(step.shows, stdout),
        `${where}: not what the page shows\n${step.shows.join('\n')}\n--- ${said}`,
      );
    }
  }
}
