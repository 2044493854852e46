// The console when the API cannot do what was asked: the list while the store is unavailable
// (503) or the server does not answer at all, and a save refused for an invalid value (400) or
// for too many requests (429). Each is told to the user in an alert, with the API's own message,
// and trying again once the cause has passed works. PostgreSQL behind a proxy the test cuts, so
// that the store really is unavailable; the built server is spawned, so that it can be stopped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { cli } from '../support/cli.js';
import { send } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { createTestStore, POSTGRES_URL, suiteOptions, type TestStore } from '../support/stores.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { assertCleanTab, openConsole, rowOf, signIn, waitForIds, type ConsoleTab } from './console-support.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
// Per token and window: the page's own requests stay far below it; the test spends a second token's.
const LIMIT = 100;
const skip = skipWithoutChromium || suiteOptions('postgres').skip || false;

describe('the console when a request fails, in Chromium', { skip }, () => {
  if (failWithoutChromium()) return;
  let db: TestStore;
  let proxy: TcpProxy;
  let server: ServerProcess;
  let viaProxy: string;
  let browser: Browser;
  let tab: ConsoleTab;
  let page: Page;
  const alert = (p: Page | Locator, text: string | RegExp) => p.getByRole('alert').filter({ hasText: text });
  const get = (path: string, token = server.token) =>
    send(server.url, { path, headers: { authorization: `Bearer ${token}` } });

  before(async () => {
    db = createTestStore('postgres');
    const target = new URL(POSTGRES_URL);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    const url = new URL(db.databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    viaProxy = url.toString();
    server = await startServer({ databaseUrl: viaProxy, env: { RATE_LIMIT_PER_WINDOW: String(LIMIT) } });
    const lines = range(1, 25).map((id) => JSON.stringify({ id, name: `Plant ${id}` }));
    assert.equal((await cli(['import'], { DATABASE_URL: db.databaseUrl }, `${lines.join('\n')}\n`)).status, 0);
    browser = await launchChromium({ viewport: { width: 1280, height: 800 } });
    tab = await openConsole(browser.context, server.url, browser.page);
    page = tab.page;
    await signIn(page, server.token);
    await waitForIds(page, range(1, 20));
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    await proxy?.close();
    await db?.drop();
  });

  it("tells why the list cannot be shown: the store's 503, then no answer at all", async () => {
    const next = page.getByRole('button', { name: 'Next page' });
    proxy.cut('refuse');
    await next.click();
    await alert(page, /^the store is unavailable; retry later \(503\): try again in \d+ s\.$/).waitFor();
    await waitForIds(page, range(1, 20));
    proxy.restore();
    assert.ok(await pollUntil(async () => (await get('/readyz')).status === 200, 10_000, 100));
    await next.click();
    await waitForIds(page, range(21, 25));
    // The page's alert is cleared once the list is shown.
    assert.equal(await alert(page, /\S/).count(), 0);

    const port = Number(new URL(server.url).port);
    assert.equal(await server.stop(), 0);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await alert(page, /^The store did not answer \(Failed to fetch\): check the connection/).waitFor();
    // A save without an answer is told in its dialog, whose Save can be pressed again.
    await page.getByRole('button', { name: 'New plant' }).click();
    const dialog = page.getByRole('dialog', { name: 'New plant' });
    await dialog.getByLabel('Id').fill('26');
    await dialog.getByLabel('Name').fill('Saved once the server is back');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await alert(dialog, /^The store did not answer/).waitFor();
    server = await startServer({
      databaseUrl: viaProxy,
      port,
      token: server.token,
      env: { RATE_LIMIT_PER_WINDOW: String(LIMIT) },
    });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await get('/plants/26')).status, 200);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await waitForIds(page, range(1, 20));
  });

  it('tells why a save was refused: an invalid value (400), too many requests (429)', async () => {
    await page.getByRole('button', { name: 'New plant' }).click();
    const dialog = page.getByRole('dialog', { name: 'New plant' });
    // The field's pattern lets any integer through; the API takes int64 ids only.
    await dialog.getByLabel('Id').fill('99999999999999999999');
    await dialog.getByLabel('Name').fill('Too big an id');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await alert(dialog, /^id must be an integer from -9223372036854775808 to 9223372036854775807 \(400\)$/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // A token of its own, spent to its limit while its tab's dialog is open.
    const created = await cli(['token', 'create', '--name', 'limited'], { DATABASE_URL: db.databaseUrl });
    assert.equal(created.status, 0, created.stderr);
    const token = created.stdout.trim();
    const limited = await openConsole(browser.context, server.url);
    await signIn(limited.page, token);
    await limited.page.getByRole('button', { name: 'Edit Plant 3 (3)' }).click();
    const edit = limited.page.getByRole('dialog', { name: 'Edit plant 3' });
    await edit.getByLabel('Name').fill('Not saved: too many requests');
    while ((await get('/plants/3', token)).status !== 429);
    await edit.getByRole('button', { name: 'Save' }).click();
    await alert(edit, /\(429\): try again in \d+ s\.$/).waitFor();
    assert.equal(JSON.parse((await get('/plants/3')).text).name, 'Plant 3');
    await rowOf(page, 'Plant 3').waitFor();
    await assertCleanTab(limited, new URL(server.url).origin);
    await limited.page.close();
  });

  it('broke no CSP rule, loaded nothing from elsewhere, and got only conforming answers', async () => {
    // The 503s and the refused connections are the errors the tab may have logged.
    await assertCleanTab(tab, new URL(server.url).origin, /status of 503|ERR_CONNECTION_REFUSED|Failed to fetch/);
  });
});
