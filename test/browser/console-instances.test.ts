// The console of one instance follows changes made through another, both on one PostgreSQL
// store: a plant created, renamed and deleted through instance B shows, changes and goes on the
// page served by instance A within a second of B's acknowledgement.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { send } from '../support/http.js';
import { newToken, startPair, type ServerProcess } from '../support/server.js';
import { createTestStore, suiteOptions, type TestStore } from '../support/stores.js';
import { assertCleanTab, openConsole, rowOf, signIn, type ConsoleTab } from './console-support.js';

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
    const within = async (what: string, write: () => Promise<unknown>, shown: () => Promise<void>) => {
      await write();
      const start = Date.now();
      await shown();
      assert.ok(Date.now() - start < 1000, `${what} took ${Date.now() - start} ms to show`);
    };
    await within(
      'a plant created through B',
      () => throughB('POST', '/plants', '{"id":1,"name":"Made through B"}'),
      () => rowOf(page, 'Made through B').waitFor({ timeout: 5000 }),
    );
    await within(
      'a plant renamed through B',
      () => throughB('PUT', '/plants/1', '{"name":"Renamed through B"}'),
      () => rowOf(page, 'Renamed through B').waitFor({ timeout: 5000 }),
    );
    await within(
      'a plant deleted through B',
      () => throughB('DELETE', '/plants/1'),
      // Shown as deleted (marked, struck through) at once, then taken away a moment later.
      async () => {
        const row = rowOf(page, 'Renamed through B');
        const until = Date.now() + 5000;
        while ((await row.getAttribute('data-change', { timeout: 100 }).catch(() => 'gone')) !== 'deleted')
          if (Date.now() > until) assert.fail('the deleted plant was not shown as deleted');
      },
    );
    await rowOf(page, 'Renamed through B').waitFor({ state: 'detached' });
    await assertCleanTab(tab, new URL(a.url).origin);
  });
});
