// The console of one instance follows changes made through another, both on one PostgreSQL
// store: a plant created, renamed and deleted through instance B shows, changes and goes on the
// page served by instance A within a second of B's acknowledgement.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { send } from '../support/http.js';
import { newToken, startPair, type ServerProcess } from '../support/server.js';
import { createTestStore, suiteOptions, type TestStore } from '../support/stores.js';
import {
  assertCleanTab,
  markedAt,
  openConsole,
  rowOf,
  signIn,
  watchMarks,
  type ConsoleTab,
} from './console-support.js';

const skip = skipWithoutChromium || suiteOptions('postgres').skip || false;

describe('the console follows the store across instances, on PostgreSQL', { skip }, () => {
  if (failWithoutChromium()) return;
  let db: TestStore;
  let a: ServerProcess;
  let b: ServerProcess;
  let browser: Browser;
  let tab: ConsoleTab;
  const token = newToken();
  const throughB = (method: string, path: string, body?: string) =>
    send(b.url, {
      method,
      path,
      headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
      ...(body && { body }),
    });

  before(async () => {
    db = createTestStore('postgres');
    [a, b] = await startPair(db.databaseUrl, token);
    browser = await launchChromium({ viewport: { width: 1280, height: 800 } });
    tab = await openConsole(browser.context, a.url, browser.page);
    await signIn(tab.page, token);
    await tab.page.getByRole('status').filter({ hasText: 'following the store' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await Promise.all([a?.dispose(), b?.dispose()]);
    await db?.drop();
  });

  it('shows a plant created, renamed and deleted through the other instance within a second', async () => {
    const page = tab.page;
    await watchMarks(page);
    /** Writes through B, then how long after B's acknowledgement the page served by A marked the row. */
    const shown = async (text: string, method: string, path: string, body: string | undefined, change: string) => {
      const before = Date.now();
      await throughB(method, path, body);
      const acknowledged = Date.now();
      return (await markedAt(page, text, change, before)) - acknowledged;
    };
    const took = {
      created: await shown('Made through B', 'POST', '/plants', '{"id":1,"name":"Made through B"}', 'created'),
      renamed: await shown('Renamed through B', 'PUT', '/plants/1', '{"name":"Renamed through B"}', 'updated'),
      deleted: await shown('Renamed through B', 'DELETE', '/plants/1', undefined, 'deleted'),
    };
    for (const [what, ms] of Object.entries(took))
      assert.ok(ms < 1000, `a plant ${what} through B took ${ms} ms to show`);
    // Marked deleted, then taken away a moment later.
    await rowOf(page, 'Renamed through B').waitFor({ state: 'detached' });
    await assertCleanTab(tab, new URL(a.url).origin);
  });
});
