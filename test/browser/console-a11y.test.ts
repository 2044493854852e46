// The console for everyone: each of its views (sign-in, plants, the plant dialogs, the conflict,
// the import, the health charts)
// has no serious or critical axe-core violation, in light and dark, at 360 and 1280 px wide,
// where the tests also take the screenshots (test-output/console-<view>-<theme>-<width>.png,
// and the README's, written from the plants view's light 1280 px one); and it can be used with
// the keyboard alone. SQLite only: the store plays no part in how the page reads.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { postPlant } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { assertCleanTab, openConsole, rowOf, seriousViolations, signIn, type ConsoleTab } from './console-support.js';

const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));
const ROOT = new URL('../../', import.meta.url);
/** The README's picture: this test's screenshot of the plants view, light, 1280 px wide. */
const README_IMAGE = 'docs/images/console-plants.png';
const README_SHOT = 'console-plants-light-1280.png';

describe('the console, for everyone', { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  let app: TestApp;
  let url: string;
  let browser: Browser;
  let tab: ConsoleTab;
  let page: Page;
  let readmeShot: Buffer | undefined;

  before(async () => {
    app = await buildTestApp();
    url = await app.listen();
    for (const [id, name, tag] of [
      [1, 'Monstera deliciosa', 'tropical'],
      [2, 'Boston fern', 'fern'],
      [3, 'Echeveria elegans', 'succulent'],
    ] as const)
      await postPlant(url, app.token, JSON.stringify({ id, name, tag }));
    browser = await launchChromium({ viewport: { width: 1280, height: 800 } });
    tab = await openConsole(browser.context, url, browser.page);
    page = tab.page;
    mkdirSync(OUTPUT, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  /** axe-core on the view as it is, then its screenshots, at both widths. */
  const check = async (view: string, theme: string) => {
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      assert.deepEqual(await seriousViolations(page), [], `${view}, ${theme}, ${width} px`);
      const name = `console-${view}-${theme}-${width}.png`;
      // No transition caught half way (a row's mark fades): the same page makes the same bytes.
      const shot = await page.screenshot({ path: join(OUTPUT, name), fullPage: true, animations: 'disabled' });
      // Written each run: fixed plants, viewport and fonts make it byte for byte what git holds.
      if (name === README_SHOT) {
        writeFileSync(new URL(README_IMAGE, ROOT), shot);
        readmeShot = shot;
      }
    }
  };

  for (const theme of ['light', 'dark'] as const) {
    it(`has no serious or critical violation on any view, ${theme}`, async () => {
      await page.emulateMedia({ colorScheme: theme });
      const signOut = page.getByRole('button', { name: 'Sign out' });
      if (await signOut.isVisible()) await signOut.click();
      await page.getByLabel('API token').waitFor();
      await check('sign-in', theme);
      await signIn(page, app.token);
      await page.getByRole('status').filter({ hasText: 'following the store' }).waitFor();
      await rowOf(page, 'Monstera').waitFor();
      await check('plants', theme);

      await page.getByRole('button', { name: 'New plant' }).click();
      await check('new-plant', theme);
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

      await page.getByRole('button', { name: /^Edit Monstera deliciosa.* \(1\)$/ }).click();
      const edit = page.getByRole('dialog', { name: 'Edit plant 1' });
      await edit.getByLabel('Tag').fill('mine');
      await check('edit', theme);
      const renamed = `Monstera deliciosa ${theme}`;
      await app.inject({
        method: 'PUT',
        path: '/plants/1',
        headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: renamed, tag: 'tropical' }),
      });
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('dialog', { name: 'Someone else changed this plant' }).waitFor();
      await check('conflict', theme);
      await page.getByRole('button', { name: 'Take theirs' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await rowOf(page, renamed).waitFor();

      await page.getByRole('button', { name: `Delete ${renamed} (1)` }).click();
      await check('delete', theme);
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

      // The import, once a small file with a problem has gone in.
      const views = page.getByRole('navigation', { name: 'Views' });
      await views.getByRole('button', { name: 'Import' }).click();
      await page.getByLabel('NDJSON file').setInputFiles({
        name: 'plants.ndjson',
        mimeType: 'application/x-ndjson',
        buffer: Buffer.from(
          `{"id":10,"name":"Pothos ${theme}"}\nnot json\n{"id":2,"name":"Boston fern","tag":"fern"}\n`,
        ),
      });
      await page.getByRole('button', { name: 'Start import' }).click();
      await page.getByRole('status').filter({ hasText: 'Imported plants.ndjson' }).waitFor();
      await check('import', theme);
      await views.getByRole('button', { name: 'Health' }).click();
      await page.getByRole('img', { name: /^Plants in the store, latest: plants \d/ }).waitFor({ timeout: 15_000 });
      await check('health', theme);
      await views.getByRole('button', { name: 'Plants' }).click();
    });
  }

  it("shows the plants view's screenshot in the README", () => {
    const readme = readFileSync(new URL('README.md', ROOT), 'utf8');
    assert.ok(readme.includes(`](${README_IMAGE})`), `the README shows no ${README_IMAGE}`);
    assert.ok(readmeShot, `no view was screenshot as ${README_SHOT}`);
    assert.deepEqual(readFileSync(new URL(README_IMAGE, ROOT)), readmeShot);
  });

  it('can be used with the keyboard alone', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    // The token field has the focus; Enter signs in.
    await page.keyboard.type(app.token);
    await page.keyboard.press('Enter');
    await rowOf(page, 'Boston fern').waitFor();
    await page.getByRole('button', { name: 'New plant' }).focus();
    await page.keyboard.press('Enter');
    // The dialog takes the focus (its first field), and Tab goes from field to field.
    await page.keyboard.type('4');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Made with the keyboard');
    await page.keyboard.press('Enter');
    await rowOf(page, 'Made with the keyboard').waitFor();
    await page.getByRole('button', { name: 'Delete Made with the keyboard (4)' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    assert.equal(
      (await app.inject({ path: '/plants/4', headers: { authorization: `Bearer ${app.token}` } })).status,
      200,
    );
  });

  it('broke no CSP rule, loaded nothing from elsewhere, and got only conforming answers', async () => {
    await assertCleanTab(tab, new URL(url).origin);
  });
});
