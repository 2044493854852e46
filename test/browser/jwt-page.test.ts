// A single-page app on its own origin in JWT mode, as PRODUCT.md §4 (Browsers) has it: Chromium
// loads a page from a second origin (another port of 127.0.0.1, in CORS_ORIGINS), which is handed
// an access token signed by a local identity provider (its JWKS on a third port) and, from its own
// JS, lists, creates, edits with the ETag it read (If-Match), reads a 412's and a 429's body and
// Retry-After, and follows the store with a stream ticket and EventSource: every change once, in
// order. The same page from an origin not on the list can do none of it. The test reads what the
// page shows. SQLite only: CORS and tickets are the same on both stores (test/http/cors.test.ts,
// test/http/change-tickets.test.ts run both); here the browser is the subject.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import * as idp from '../support/identity-provider.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { jwtPage } from './jwt-page.js';
import { servePage } from './page-origin.js';

/** Requests per token in the window: the page's first six pass, and its flood soon meets a 429. */
const LIMIT = 10;

describe("a page on its own origin, signed in with an identity provider's token", { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  let key: idp.SigningKey;
  let jwks: idp.JwksServer;
  let app: TestApp;
  let api: string;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  let browser: Browser;
  let tab: Page;

  before(async () => {
    key = await idp.newKey('ES256', 'idp-1');
    jwks = await idp.startJwksServer([key]);
    allowed = await servePage(() => jwtPage(api));
    other = await servePage(() => jwtPage(api));
    app = await buildTestApp({
      env: { ...idp.jwtEnv(jwks), CORS_ORIGINS: allowed.origin, RATE_LIMIT_PER_WINDOW: String(LIMIT) },
    });
    api = await app.listen();
    browser = await launchChromium();
    tab = browser.page;
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await jwks?.close();
    allowed?.server.close();
    other?.server.close();
  });

  const signIn = (subject: string) => idp.signToken(key, { subject, claims: { scope: 'plants:read plants:write' } });
  const items = (list: string) => tab.getByRole('list', { name: list }).getByRole('listitem');
  async function run(url: string): Promise<string[]> {
    await tab.goto(url);
    await tab.getByRole('button', { name: 'Run' }).click();
    await tab.getByRole('status').filter({ hasText: 'done' }).waitFor({ timeout: 10_000 });
    return items('calls').allTextContents();
  }

  it('lists, creates, edits with If-Match, reads a 412 and a 429, and follows every change once, in order', async () => {
    const calls = await run(`${allowed.origin}/#access_token=${await signIn('alice')}&id=7`);
    assert.equal(calls.length, 5, calls.join('\n'));
    assert.equal(calls[0], 'list: 200, 0 plants');
    const [, etag, createdAt] = /^create: 200, ETag ("[\w-]+"), at (\d+)$/.exec(calls[1]!) ?? assert.fail(calls[1]);
    const [, edited, editedAt] = /^edit: 200, ETag ("[\w-]+"), at (\d+)$/.exec(calls[2]!) ?? assert.fail(calls[2]);
    assert.notEqual(edited, etag);
    assert.match(calls[3]!, /^stale edit: 412, error 412: .*has changed/);
    assert.match(calls[4]!, /^flood: 429, error 429: \S.*, Retry-After [1-9]\d*$/);

    await items('changes').nth(1).waitFor({ timeout: 5000 });
    // The stale edit changed nothing: no third change comes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(await items('changes').allTextContents(), [
      `created 7 at ${createdAt}`,
      `updated 7 at ${editedAt}`,
    ]);
  });

  it('lets the same page on an origin not on the list do none of it', async () => {
    const token = await signIn('bob');
    const made = await app.inject({
      method: 'POST',
      path: '/plants/changes/tickets',
      headers: { authorization: `Bearer ${token}` },
    });
    const { ticket } = made.json as { ticket: string };
    await run(`${other.origin}/#access_token=${token}&id=8&ticket=${ticket}`);
    await tab.getByText(/^stream: (opened|failed)$/).waitFor({ timeout: 5000 });
    const calls = await items('calls').allTextContents();
    const refused = (step: string) => `${step}: refused, TypeError: Failed to fetch`;
    assert.deepEqual(
      calls.sort(),
      [...['list', 'ticket', 'create', 'edit', 'stale edit', 'flood'].map(refused), 'stream: failed'].sort(),
    );
    assert.deepEqual(await items('changes').allTextContents(), []);
    const stored = await app.inject({ path: '/plants/8', headers: { authorization: `Bearer ${app.token}` } });
    assert.equal(stored.status, 404, 'the create never reached the service');
  });
});
