// The manual's shell blocks, run as written, in order, each page in a terminal of its own on ports
// of its own (docs/tutorial.md says the guides go on from its store, so a guide runs after it), and
// what each prints compared with what the page shows. A block that cannot run on this machine says
// why in the comment before it; every shell block of the manual says one or the other.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from '../support/pgbouncer.js';

import { shellBlocks } from './page-blocks.js';
import { openTerminal, ROOT } from './run-page.js';

/**
 * Pages whose blocks are not marked here: README.md's two blocks are the tutorial's first two
 * (test/docs/manual.test.ts holds them equal), which run with it; the CORS guide is being rewritten.
 */
const NOT_OURS = ['docs/guides/cors.md'];

async function runPages(pages: string[], ports: Record<string, number> = {}): Promise<void> {
  const terminal = await openTerminal({ '3000': await freePort(), ...ports });
  try {
    for (const page of pages) await terminal.run(page);
  } finally {
    await terminal.close();
  }
}

describe('the manual, run as written', () => {
  it('docs/tutorial.md', () => runPages(['docs/tutorial.md']));

  it('docs/guides/following-the-store.md, after the tutorial', () =>
    runPages(['docs/tutorial.md', 'docs/guides/following-the-store.md']));

  it('every shell block says whether it runs, and why when it does not', () => {
    const pages = [...readdirSync(join(ROOT, 'docs'), { recursive: true }).map((f) => `docs/${String(f)}`)];
    const unmarked: string[] = [];
    for (const page of pages.filter((p) => p.endsWith('.md') && !NOT_OURS.includes(p))) {
      for (const block of shellBlocks(readFileSync(join(ROOT, page), 'utf8'))) {
        if (!/^(run|run in the background|not run: .{10,})$/.test(block.mark ?? ''))
          unmarked.push(`${page}:${block.line}`);
      }
    }
    assert.deepEqual(unmarked, []);
  });
});
