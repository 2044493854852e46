// The examples of /docs as a new user meets them: on a fresh store, Authorize, then every
// operation from the top, opened and sent with Execute exactly as the page fills it in. Each must
// answer 2xx, send no condition (If-Match, If-None-Match) and no filter nobody asked for, and show
// the rate-limit headers of its responses once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { loadDocument, type JsonObject } from '../../src/openapi/document.js';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { send } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { authorize } from './docs-support.js';

const doc = loadDocument();
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The operations as the page lists them: by tag, in the order of the document's tags, then of its paths and methods. */
const pageOrder = (doc.raw.tags as { name: string }[]).flatMap(({ name: tag }) =>
  Object.values(doc.raw.paths as Record<string, Record<string, JsonObject>>).flatMap((item) =>
    Object.entries(item)
      .filter(([method, op]) => METHODS.includes(method) && (op.tags as string[])[0] === tag)
      .map(([, op]) => ({ tag, operationId: op.operationId as string })),
  ),
);

/** Whether any response of the operation declares the rate-limit headers (a $ref read through). */
function declaresRateLimit(operationId: string): boolean {
  const { path, method } = doc.operations.get(operationId)!;
  const paths = doc.raw.paths as Record<string, Record<string, { responses: Record<string, JsonObject> }>>;
  const named = (doc.raw.components as { responses: Record<string, JsonObject> }).responses;
  return Object.values(paths[path]![method.toLowerCase()]!.responses).some((response) => {
    const ref = typeof response.$ref === 'string' ? response.$ref.split('/').pop()! : undefined;
    return 'RateLimit-Limit' in (((ref ? named[ref] : response)?.headers as JsonObject | undefined) ?? {});
  });
}

describe('/docs examples, each sent with Execute in page order on a fresh store', { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  // The app in-process, on a socket of its own: Chromium is the subject here, not the server's process.
  let app: TestApp;
  let server: { url: string; token: string };
  let browser: Browser;
  let page: Page;

  before(async () => {
    app = await buildTestApp();
    server = { url: await app.listen(), token: app.token };
    browser = await launchChromium();
    page = browser.page;
    page.setDefaultTimeout(15_000);
    await page.goto(new URL('/docs', server.url).href);
    await page.locator('.opblock-tag-section .opblock').first().waitFor();
    await authorize(page, server.token);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  const sent: string[] = [];

  it('lists the operations in the order of the document, by tag', async () => {
    const ids = await page.locator('.opblock-tag-section .opblock').evaluateAll((els) => els.map((el) => el.id));
    assert.deepEqual(
      ids,
      pageOrder.map(({ tag, operationId }) => `operations-${tag}-${operationId}`),
    );
  });

  for (const { tag, operationId } of pageOrder) {
    it(`${operationId}: Execute on its example answers 2xx, and no condition is sent`, async () => {
      const { method, path } = doc.operations.get(operationId)!;
      const pattern = doc.paths.find((p) => p.path === path)!.pattern;
      const block = page.locator(`#operations-${tag}-${operationId}`);
      await block.locator('.opblock-summary').click();

      // The rate-limit rows, once per operation (on its first response), where it declares them.
      await block.locator('.responses-table').first().waitFor();
      const rows = block.locator('.responses-table table.headers td.header-col', { hasText: /^RateLimit-Limit$/ });
      assert.equal(await rows.count(), declaresRateLimit(operationId) ? 1 : 0, 'RateLimit-Limit rows');
      // An optional header's example is a hint in the empty input, not a value that is sent.
      for (const name of ['If-Match', 'If-None-Match']) {
        const input = block.locator(`tr[data-param-name="${name}"] input`);
        assert.equal(await input.inputValue(), '', `${name} is filled in`);
        assert.match((await input.getAttribute('placeholder')) ?? '', /e\.g\. "/, `${name}'s hint`);
      }

      const answer = page.waitForResponse(
        (r) => r.request().method() === method && pattern.test(new URL(r.url()).pathname),
      );
      await block.locator('button.execute').click();
      const response = await answer;
      const request = response.request();
      const url = new URL(request.url());
      sent.push(`${method} ${url.pathname}${url.search}`);
      assert.equal(request.headers()['if-match'], undefined, 'If-Match sent');
      assert.equal(request.headers()['if-none-match'], undefined, 'If-None-Match sent');
      assert.ok(response.status() >= 200 && response.status() < 300, `${response.status()} ${await response.text()}`);
      const shown = block.locator('.live-responses-table tbody .response-col_status');
      assert.equal((await shown.first().innerText()).trim(), String(response.status()));
      const live = block.locator('.live-responses-table .headerline', { hasText: /ratelimit-limit/i });
      assert.ok((await live.count()) <= 1, "the answer's RateLimit-Limit is shown more than once");
      await block.locator('.opblock-summary').click();
    });
  }

  it('sent no filter, and left the plants the examples say', async () => {
    // The lists went with `limit` alone, at its default.
    assert.deepEqual(
      sent.filter((s) => s.startsWith('GET /plants')),
      ['GET /plants?limit=20', 'GET /plants/changes?limit=100', 'GET /plants/1001'],
    );
    // Plant 1001 created, read, replaced, patched and deleted; the batch's 2001 and 2002.
    const listed = await send(server.url, { path: '/plants', headers: { authorization: `Bearer ${server.token}` } });
    assert.deepEqual(listed.json, [
      { id: 2001, name: 'Monstera', tag: 'tropical' },
      { id: 2002, name: 'Fern', tag: 'shade' },
    ]);
  });
});
