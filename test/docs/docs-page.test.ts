import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page, Response } from 'playwright-core';
import type { JsonObject } from '../../src/openapi/document.js';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { checkResponse } from '../support/conformance.js';
import { rawResponse, send } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { authorize } from './docs-support.js';

const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));

// One store: the page and the document behind it do not depend on it (a plant created from the
// page goes through the same POST /plants the store suites cover). docs-examples.test.ts presses
// every example on a store of its own.
describe('the API reference at GET /docs, in Chromium', { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  // The app in-process, on a socket of its own: Chromium is the subject here, not the server's process.
  let app: TestApp;
  let server: { url: string; token: string };
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];
  const responses: Response[] = [];
  const pageErrors: string[] = [];

  before(async () => {
    app = await buildTestApp();
    server = { url: await app.listen(), token: app.token };
    // A laptop's first screen: the operations and Authorize must be in it, without scrolling.
    browser = await launchChromium({ viewport: { width: 1280, height: 800 } });
    page = browser.page;
    page.setDefaultTimeout(15_000);
    page.on('request', (request) => requested.push(request.url()));
    page.on('response', (response) => responses.push(response));
    // A CSP violation or a failed load is reported as a console error.
    page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.goto(new URL('/docs', server.url).href);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  it('shows Authorize and the first operations in the first screen, the guide after the operations', async () => {
    const first = page.locator('.opblock-tag-section .opblock').first();
    await first.waitFor();
    assert.equal(await page.evaluate('window.scrollY'), 0);
    const viewport = page.viewportSize()!;
    for (const [what, locator] of [
      ['Authorize', page.locator('.scheme-container button.authorize')],
      ['the first operation', first],
    ] as const) {
      const box = await locator.boundingBox();
      assert.ok(box, `${what} is not rendered`);
      assert.ok(
        box.y >= 0 && box.y + box.height <= viewport.height,
        `${what} is at ${box.y} px, below the first screen`,
      );
    }
    assert.match(await first.innerText(), /GET\s+\/plants\b/);

    // The document's guide (its sections after the introduction) follows the operations.
    const guide = page.locator('.guide');
    await guide.locator('h2', { hasText: 'Getting a token' }).waitFor();
    const lastOperation = await page.locator('.opblock-tag-section .opblock').last().boundingBox();
    const guideBox = await guide.boundingBox();
    assert.ok(lastOperation && guideBox && guideBox.y > lastOperation.y, 'the guide is not below the operations');
    assert.match(await guide.innerText(), /Errors[\s\S]*Rate limits/);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'docs-first-screen.png') });
  });

  it('labels schemas as a person would: titles, and no "any" or "&" in their types', async () => {
    const doc = (await send(server.url, { path: '/openapi.json' })).json as {
      components: { schemas: Record<string, { title?: string }> };
    };
    const heads = page.locator('.models .json-schema-2020-12-head');
    await heads.first().waitFor();
    const labels = (await heads.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    const titles = Object.values(doc.components.schemas).map((s) => s.title);
    assert.deepEqual(
      labels.map((l) => l.replace(/ ?Expand all ?/, ' ')),
      titles.map((t) => `${t} object`),
    );

    // The same labels inside an operation: POST /plants's request body schema.
    const operation = page.locator('#operations-plants-addPlant');
    await operation.locator('.opblock-summary').click();
    await operation.locator('.tab button', { hasText: 'Schema' }).first().click();
    const types = await operation.locator('.json-schema-2020-12__attribute--primary').allInnerTexts();
    assert.ok(types.length > 0);
    for (const type of types) assert.doesNotMatch(type, /\bany\b|&/, `type label "${type}"`);
    // Back as it was, for the test that edits the example.
    await operation.locator('.tab button', { hasText: 'Edit Value' }).first().click();
    await operation.locator('.opblock-summary').click();
  });

  it('lists every operation of the served document', async () => {
    const doc = (await send(server.url, { path: '/openapi.json' })).json as { paths: Record<string, JsonObject> };
    const operations = Object.values(doc.paths).flatMap((item) =>
      Object.entries(item)
        .filter(([key]) => ['get', 'put', 'post', 'delete'].includes(key))
        .map(([, op]) => op as JsonObject),
    );
    assert.ok(operations.some((op) => op.operationId === 'addPlant'));
    for (const op of operations) {
      const block = page.locator(`#operations-${(op.tags as string[])[0]}-${op.operationId as string}`);
      await block.waitFor();
      assert.match(await block.innerText(), new RegExp(op.summary as string), String(op.operationId));
    }
    assert.match(await page.locator('.info .title').innerText(), /Plant Store/);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'docs-reference.png'), fullPage: true });
  });

  it('sends POST /plants with a pasted token, and the plant then exists through the API', async () => {
    await authorize(page, server.token);

    const operation = page.locator('#operations-plants-addPlant');
    await operation.locator('.opblock-summary').click();
    await operation
      .locator('textarea.body-param__text')
      .fill('{"id": 4242, "name": "Fern from the docs page", "tag": "docs"}');
    const answer = page.waitForResponse((r) => r.url().endsWith('/plants') && r.request().method() === 'POST');
    await operation.locator('button.execute').click();
    assert.equal((await answer).status(), 200);
    const shown = operation.locator('.live-responses-table');
    await shown.locator('.response-col_status', { hasText: '200' }).waitFor();
    assert.match(await shown.innerText(), /Fern from the docs page/);
    await shown.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(OUTPUT, 'docs-try-it.png') });

    const stored = await send(server.url, {
      path: '/plants/4242',
      headers: { authorization: `Bearer ${server.token}` },
    });
    assert.equal(stored.status, 200);
    assert.deepEqual(stored.json, { id: 4242, name: 'Fern from the docs page', tag: 'docs' });
  });

  it('shows an id past 2^53 as its own digits, not as JSON.parse rounds it', async () => {
    const id = '9223372036854775807';
    const created = await send(server.url, {
      method: 'POST',
      path: '/plants',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: `{"id":${id},"name":"Exact","tag":"docs"}`,
    });
    assert.equal(created.status, 200);
    const operation = page.locator('#operations-plants-getPlant');
    await operation.locator('.opblock-summary').click();
    await operation.locator('tr[data-param-name="id"] input').fill(id);
    const answer = page.waitForResponse((r) => r.url().endsWith(`/plants/${id}`));
    await operation.locator('button.execute').click();
    assert.equal((await answer).status(), 200);
    const shown = operation.locator('.live-responses-table');
    await shown.getByText('"Exact"').waitFor();
    const text = await shown.innerText();
    assert.match(text, new RegExp(`"id": ${id},`));
    assert.doesNotMatch(text, /9223372036854776000/);
  });

  it('loaded everything from the server itself, broke no CSP rule, and got only conforming responses', async () => {
    const origin = new URL(server.url).origin;
    assert.deepEqual(
      requested.filter((url) => new URL(url).origin !== origin && !url.startsWith('data:')),
      [],
    );
    assert.deepEqual(pageErrors, []);
    assert.ok(responses.length >= 6, `only ${responses.length} responses`);
    for (const response of responses) {
      const url = new URL(response.url());
      const raw = rawResponse(response.status(), await response.allHeaders(), await response.text());
      assert.deepEqual(checkResponse(response.request().method(), url.pathname, raw), [], url.pathname);
    }
  });
});
