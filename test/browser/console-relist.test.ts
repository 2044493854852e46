// The console's live list when the change feed answers 410: the store was restored from a backup
// while the page was away, so the log no longer reaches the position the page followed from. The
// page lists again and follows from a fresh snapshot, instead of stalling on what it showed.
// The built server is spawned: the restore happens between two of its runs, as it would.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { cli } from '../support/cli.js';
import { send } from '../support/http.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { assertCleanTab, openConsole, rowOf, signIn, waitForIds, type ConsoleTab } from './console-support.js';

describe('the console after a restore (410 from the change feed), in Chromium', { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  let dir: string;
  let server: ServerProcess;
  let browser: Browser;
  let tab: ConsoleTab;
  let page: Page;
  const api = (method: string, path: string, body: string) =>
    send(server.url, {
      method,
      path,
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body,
    });
  const status = (text: string) => page.getByRole('status').filter({ hasText: text });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-console-relist-'));
    server = await startServer({ dataDir: dir });
    const lines = [1, 2, 3, 4, 5].map((id) => JSON.stringify({ id, name: `Plant ${id}` })).join('\n');
    assert.equal((await cli(['import'], { DATABASE_URL: server.databaseUrl }, `${lines}\n`)).status, 0);
    browser = await launchChromium({ viewport: { width: 1280, height: 800 } });
    tab = await openConsole(browser.context, server.url, browser.page);
    page = tab.page;
    await signIn(page, server.token);
    await status('following the store').waitFor();
    await waitForIds(page, [1, 2, 3, 4, 5]);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists the restored store again and follows it from a fresh snapshot', async () => {
    const env = { DATABASE_URL: server.databaseUrl };
    const backup = join(dir, 'store.backup');
    const made = await cli(['backup', '--output', backup], env);
    assert.equal(made.status, 0, made.stderr);
    // What the page shows after the backup, and the restore will undo.
    assert.equal((await api('POST', '/plants', '{"id":6,"name":"Made after the backup"}')).status, 200);
    assert.equal((await api('PUT', '/plants/1', '{"name":"Renamed after the backup"}')).status, 200);
    await waitForIds(page, [1, 2, 3, 4, 5, 6]);
    await rowOf(page, 'Renamed after the backup').waitFor();

    const gone: string[] = [];
    page.on('response', (r) => r.status() === 410 && gone.push(new URL(r.url()).pathname));
    const port = Number(new URL(server.url).port);
    assert.equal(await server.stop(), 0);
    for (const file of ['plant-store.db', 'plant-store.db-wal', 'plant-store.db-shm'])
      rmSync(join(dir, file), { force: true });
    const restored = await cli(['restore', '--input', backup], env);
    assert.equal(restored.status, 0, restored.stderr);
    server = await startServer({ dataDir: dir, port, token: server.token });

    // The page's position is from before the restore: the feed answers 410, and the page lists again.
    await waitForIds(page, [1, 2, 3, 4, 5], 15_000);
    await rowOf(page, 'Plant 1').waitFor();
    await status('following the store').waitFor();
    assert.ok(gone.includes('/plants/changes'), `the feed answered no 410 (${gone.join()})`);
    // And it follows the restored store: a change made now shows.
    assert.equal((await api('POST', '/plants', '{"id":7,"name":"Made after the restore"}')).status, 200);
    await rowOf(page, 'Made after the restore').waitFor({ timeout: 5000 });
    assert.equal(await rowOf(page, 'Made after the backup').count(), 0);
  });

  it('broke no CSP rule, loaded nothing from elsewhere, and got only conforming answers', async () => {
    // The restart's refused connections, and the feed's 410, are the errors the tab may have logged.
    await assertCleanTab(tab, new URL(server.url).origin, /ERR_CONNECTION_REFUSED/);
  });
});
