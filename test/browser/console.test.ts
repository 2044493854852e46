// The console (GET /console) driven in Chromium as a user would, by role and label: signing in,
// paging, filtering and searching, creating, editing and deleting, two tabs editing one plant,
// changes made through the API and by the CLI appearing live, and the list following on after a
// restart. The built server is spawned: its restart is part of the story, and it serves the
// console as the package ships it (dist/console).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { cli } from '../support/cli.js';
import { postPlant, send } from '../support/http.js';
import { startServer, type ServerProcess } from '../support/server.js';
import {
  assertCleanTab,
  markedAt,
  openConsole,
  rowOf,
  signIn,
  waitForIds,
  watchMarks,
  type ConsoleTab,
} from './console-support.js';

const range = (from: number, to: number, step = 1) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

describe('the console at GET /console, in Chromium', { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  let dir: string;
  let server: ServerProcess;
  let browser: Browser;
  let tab: ConsoleTab;
  let page: Page;
  const api = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    send(server.url, {
      method,
      path,
      headers: {
        authorization: `Bearer ${server.token}`,
        ...(body && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body && { body }),
    });
  const nameOf = async (id: number) => (JSON.parse((await api('GET', `/plants/${id}`)).text) as { name: string }).name;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-console-'));
    server = await startServer({ dataDir: dir });
    // 45 plants: every fifth tropical, every third a fern.
    for (const id of range(1, 45)) {
      const plant = {
        id,
        name: id % 3 === 0 ? `Boston fern ${id}` : `Plant ${id}`,
        ...(id % 5 === 0 && { tag: 'tropical' }),
      };
      assert.equal((await postPlant(server.url, server.token, JSON.stringify(plant))).status, 200);
    }
    browser = await launchChromium({ viewport: { width: 1280, height: 800 } });
    tab = await openConsole(browser.context, server.url, browser.page);
    page = tab.page;
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs in with a pasted token, kept for this tab only', async () => {
    await page.getByLabel('API token').fill('pst_not-a-token-of-this-store-000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'does not accept this token' }).waitFor();
    await signIn(page, server.token);
    await page.getByRole('status').filter({ hasText: 'Live: following the store' }).waitFor();
    const kept = await page.evaluate(
      '({ session: Object.values(sessionStorage), local: localStorage.length, cookie: document.cookie })',
    );
    assert.deepEqual(kept, { session: [server.token], local: 0, cookie: '' });
    assert.ok(!page.url().includes(server.token));
    await page.reload();
    await page.getByRole('heading', { name: 'Plants' }).waitFor();
  });

  it('pages through the list, filters it by tag and searches it by words', async () => {
    await waitForIds(page, range(1, 20));
    const next = page.getByRole('button', { name: 'Next page' });
    await next.click();
    await waitForIds(page, range(21, 40));
    await next.click();
    await waitForIds(page, range(41, 45));
    assert.equal(await next.isDisabled(), true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await waitForIds(page, range(21, 40));

    const search = page.getByRole('search');
    await search.getByLabel('Tag').fill('tropical');
    await search.getByRole('button', { name: 'Filter' }).click();
    await waitForIds(page, range(5, 45, 5));
    await search.getByLabel('Tag').fill('');
    await search.getByLabel('Search').fill('FERN boston');
    await search.getByRole('button', { name: 'Filter' }).click();
    await waitForIds(page, range(3, 45, 3).slice(0, 20));
    await search.getByLabel('Search').fill('');
    await search.getByRole('button', { name: 'Filter' }).click();
    await waitForIds(page, range(1, 20));
  });

  it('creates, edits and deletes a plant', async () => {
    await page.getByRole('button', { name: 'New plant' }).click();
    const create = page.getByRole('dialog', { name: 'New plant' });
    await create.getByLabel('Id').fill('-7');
    await create.getByLabel('Name').fill('Console monstera');
    await create.getByLabel('Tag').fill('tropical');
    await create.getByRole('button', { name: 'Save' }).click();
    await create.waitFor({ state: 'detached' });
    assert.equal(await nameOf(-7), 'Console monstera');
    await rowOf(page, 'Console monstera').waitFor();

    await page.getByRole('button', { name: 'Edit Console monstera (-7)' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit plant -7' });
    await edit.getByLabel('Name').fill('Console monstera variegata');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    assert.equal(await nameOf(-7), 'Console monstera variegata');
    await rowOf(page, 'Console monstera variegata').waitFor();

    await page.getByRole('button', { name: 'Delete Console monstera variegata (-7)' }).click();
    await page
      .getByRole('dialog', { name: 'Delete Console monstera variegata?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    // Plant 20 went to the next page when -7 came; the page does not take it back.
    await waitForIds(page, range(1, 19));
    assert.equal((await api('GET', '/plants/-7')).status, 404);
  });

  it('shows both versions when another tab changed the plant, and each choice does what it says', async () => {
    const other = await openConsole(browser.context, server.url);
    // sessionStorage is the tab's: the second tab signs in on its own.
    await signIn(other.page, server.token);
    const edit = async (p: Page, name: string) => {
      await p.getByRole('button', { name: /^Edit .* \(2\)$/ }).click();
      const dialog = p.getByRole('dialog', { name: 'Edit plant 2' });
      await dialog.getByLabel('Name').fill(name);
      return dialog;
    };
    for (const choice of ['Keep mine', 'Take theirs'] as const) {
      const mine = await edit(page, `${choice}: from the first tab`);
      const theirs = await edit(other.page, `${choice}: from the second tab`);
      await theirs.getByRole('button', { name: 'Save' }).click();
      await theirs.waitFor({ state: 'detached' });
      await mine.getByRole('button', { name: 'Save' }).click();
      const conflict = page.getByRole('dialog', { name: 'Someone else changed this plant' });
      assert.match(await conflict.getByRole('region', { name: 'Your version' }).innerText(), /from the first tab/);
      assert.match(await conflict.getByRole('region', { name: 'Their version' }).innerText(), /from the second tab/);
      await conflict.getByRole('button', { name: choice }).click();
      await conflict.waitFor({ state: 'detached' });
      const kept = choice === 'Keep mine' ? 'first' : 'second';
      assert.equal(await nameOf(2), `${choice}: from the ${kept} tab`);
      // Both tabs show what the store holds: the other tab through its live list.
      for (const p of [page, other.page]) await rowOf(p, `${choice}: from the ${kept} tab`).waitFor();
    }
    await assertCleanTab(other, new URL(server.url).origin);
    await other.page.close();
  });

  it('draws the health charts from /metrics', async () => {
    const views = page.getByRole('navigation', { name: 'Views' });
    await views.getByRole('button', { name: 'Health' }).click();
    // Two scrapes make the first figures: the plants in the store, and this page's own requests.
    const plants = page.getByRole('img', { name: /^Plants in the store, latest: plants \d/ });
    await plants.waitFor({ timeout: 15_000 });
    assert.match((await plants.getAttribute('aria-label'))!, /latest: plants 45$/);
    const requests = (await page.getByRole('img', { name: /^Requests a second/ }).getAttribute('aria-label'))!;
    assert.ok(Number(/2xx ([\d.]+)\/s/.exec(requests)?.[1]) > 0, requests);
    for (const name of ['Latency', 'Webhook deliveries a second', 'Open streams'])
      await page.getByRole('img', { name: new RegExp(`^${name}, latest: `) }).waitFor();
    // The page's own stream is open.
    assert.match((await page.getByRole('img', { name: /^Open streams/ }).getAttribute('aria-label'))!, /open [1-9]/);
    // A third scrape makes the lines: each chart's first series joins two points or more.
    const line = plants.locator('polyline').first();
    const until = Date.now() + 15_000;
    while (((await line.getAttribute('points')) ?? '').split(' ').length < 2 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 200));
    assert.match((await line.getAttribute('points'))!, /^[\d.]+,[\d.]+( [\d.]+,[\d.]+)+$/);
    await views.getByRole('button', { name: 'Plants' }).click();
  });

  it('tells a token without plants:write or metrics:read which scope it lacks, and changes nothing', async () => {
    const env = { DATABASE_URL: server.databaseUrl };
    const created = await cli(['token', 'create', '--name', 'reader', '--scope', 'plants:read'], env);
    assert.equal(created.status, 0, created.stderr);
    const reader = await openConsole(browser.context, server.url);
    await signIn(reader.page, created.stdout.trim());
    await rowOf(reader.page, 'Plant 4').waitFor();
    await reader.page.getByRole('button', { name: 'New plant' }).click();
    const dialog = reader.page.getByRole('dialog', { name: 'New plant' });
    await dialog.getByLabel('Id').fill('100');
    await dialog.getByLabel('Name').fill('Not for a reader');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'it lacks the scope plants:write' }).waitFor();
    assert.equal((await api('GET', '/plants/100')).status, 404);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await reader.page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name: 'Health' }).click();
    await reader.page.getByRole('status').filter({ hasText: 'it lacks the scope metrics:read' }).waitFor();
    await assertCleanTab(reader, new URL(server.url).origin);
    await reader.page.close();
  });

  it('shows a change made through the API or by the CLI within a second, marked for a moment', async () => {
    await watchMarks(page);
    /** Writes, then how long after the write's acknowledgement the page marked its row. */
    const shown = async (text: string, write: () => Promise<unknown>, change: string) => {
      const before = Date.now();
      await write();
      const acknowledged = Date.now();
      return (await markedAt(page, text, change, before)) - acknowledged;
    };
    const env = { DATABASE_URL: server.databaseUrl };
    const took = {
      'made through the API': await shown(
        'Made by curl',
        () => api('POST', '/plants', '{"id":-3,"name":"Made by curl"}'),
        'created',
      ),
      'imported by the CLI': await shown(
        'Made by the CLI',
        () => cli(['import'], env, '{"id":-2,"name":"Made by the CLI"}\n'),
        'created',
      ),
      'renamed through the API': await shown(
        'Renamed live',
        () => api('PUT', '/plants/1', '{"name":"Renamed live"}'),
        'updated',
      ),
      'deleted through the API': await shown('Made by curl', () => api('DELETE', '/plants/-3'), 'deleted'),
    };
    for (const [what, ms] of Object.entries(took)) assert.ok(ms < 1000, `a plant ${what} took ${ms} ms to show`);
    // The marked row goes a moment after it was marked deleted, and the page is as the store.
    await waitForIds(page, [-2, ...range(1, 18)], 5000);
  });

  it('follows on after a restart by itself, losing nothing', async () => {
    const port = Number(new URL(server.url).port);
    assert.equal(await server.stop(), 0);
    await page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor();
    server = await startServer({ dataDir: dir, port, token: server.token });
    // Written before the page is back: it comes with the stream's resumption.
    await api('POST', '/plants', '{"id":-5,"name":"Made during the restart"}');
    await rowOf(page, 'Made during the restart').waitFor({ timeout: 15_000 });
    await page.getByRole('status').filter({ hasText: 'following the store' }).waitFor();
    await api('POST', '/plants', '{"id":-4,"name":"Made after the restart"}');
    await waitForIds(page, [-5, -4, -2, ...range(1, 17)], 5000);
  });

  it('broke no CSP rule, loaded nothing from elsewhere, and got only conforming answers', async () => {
    // The restart's refused connections are the only errors the tab may have logged.
    await assertCleanTab(tab, new URL(server.url).origin, /ERR_CONNECTION_REFUSED/);
  });
});
