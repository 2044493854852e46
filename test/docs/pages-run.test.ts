// The manual's shell blocks, run as written, in order, each page in a terminal of its own on ports
// of its own (docs/tutorial.md says the guides go on from its store, so a guide runs after it), and
// what each prints compared with what the page shows. A block that cannot run on this machine says
// why in the comment before it; every shell block of the manual says one or the other.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from '../support/pgbouncer.js';
import { pollUntil } from '../support/poll.js';
import { Receiver } from '../support/receiver.js';

import { shellBlocks } from './page-blocks.js';
import { openTerminal, ROOT } from './run-page.js';

/**
 * Pages whose blocks are not marked here: README.md's two blocks are the tutorial's first two
 * (test/docs/manual.test.ts holds them equal), which run with it; the CORS guide is being rewritten.
 */
const NOT_OURS = ['docs/guides/cors.md'];

/** Runs the pages in one terminal, then `meanwhile` (what the pages did elsewhere), before it is closed. */
async function runPages(
  pages: string[],
  ports: Record<string, number> = {},
  meanwhile = async () => {},
): Promise<void> {
  const terminal = await openTerminal({ '3000': await freePort(), ...ports });
  try {
    for (const page of pages) await terminal.run(page);
    await meanwhile();
  } finally {
    await terminal.close();
  }
}

/**
 * A page's run takes 7 to 17 s alone; beside the suite's other processes on a 2-core machine the
 * webhooks guide's passed the runner's 60 s limit (which is there to catch hangs).
 */
const PAGE_RUN = { timeout: 300_000 };

describe('the manual, run as written', () => {
  it('docs/tutorial.md', PAGE_RUN, () => runPages(['docs/tutorial.md']));

  it('docs/guides/following-the-store.md, after the tutorial', PAGE_RUN, () =>
    runPages(['docs/tutorial.md', 'docs/guides/following-the-store.md']),
  );

  it('docs/guides/webhooks.md, after the tutorial, with a receiver on its port 9000', PAGE_RUN, async () => {
    const receiver = await new Receiver().start();
    try {
      const events = () => receiver.requests.map((r) => `${r.headers['webhook-event-type']} ${r.body}`);
      // What the page says reaches the receiver, while its server runs: the test event, then the write.
      await runPages(['docs/tutorial.md', 'docs/guides/webhooks.md'], { '9000': receiver.port }, async () => {
        await pollUntil(async () => events().length >= 2, 10_000);
      });
      assert.equal(events().length, 2, events().join('\n'));
      assert.match(events()[0]!, /^webhook\.test \{"type":"webhook\.test","endpoint":"ep_/);
      assert.equal(events()[1], 'plant.created {"id":4,"name":"Aloe"}');
    } finally {
      await receiver.close();
    }
  });

  it('every shell block says whether it runs, and why when it does not', () => {
    const pages = [...readdirSync(join(ROOT, 'docs'), { recursive: true }).map((f) => `docs/${String(f)}`)];
    const unmarked: string[] = [];
    for (const page of pages.filter((p) => p.endsWith('.md') && !NOT_OURS.includes(p))) {
      for (const block of shellBlocks(readFileSync(join(ROOT, page), 'utf8'))) {
        if (
          !/^(run|run in the background(, in place of the quick start's server)?|not run: .{10,})$/.test(
            block.mark ?? '',
          )
        )
          unmarked.push(`${page}:${block.line}`);
      }
    }
    assert.deepEqual(unmarked, []);
  });
});
