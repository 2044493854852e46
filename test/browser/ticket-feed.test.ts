// Following the store from a page on its own origin, as docs/guides/cors.md shows it: Chromium
// loads a page from a second origin (another port of 127.0.0.1), which asks the service for a
// stream ticket with its token (CORS) and opens an EventSource with it. The first ticket it is
// handed has expired: the stream answers 401, EventSource gives up, and the page gets a new
// ticket and opens again; every change arrives once, in order, and no Authorization ever goes in
// a URL.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { TICKET_TTL_MS } from '../../src/domain/ticket.js';
import { createTicket } from '../../src/use-cases/create-ticket.js';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { postPlant } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { followPage as page } from './follow-page.js';
import { servePage } from './page-origin.js';

describe('a page on its own origin follows the store with stream tickets', { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  let pages: Server;
  let origin = '';
  let app: TestApp;
  let api: string;
  let browser: Browser;
  let tab: Page;

  before(async () => {
    ({ server: pages, origin } = await servePage(() => page(api)));
    app = await buildTestApp({ env: { CORS_ORIGINS: origin }, logs: true });
    api = await app.listen();
    browser = await launchChromium();
    tab = browser.page;
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    pages?.close();
  });

  it('lets a page of an origin not on the list do none of it', async () => {
    const other = await servePage(() => '<title>x</title>');
    try {
      const made = (await app
        .inject({
          method: 'POST',
          path: '/plants/changes/tickets',
          headers: { authorization: `Bearer ${app.token}` },
        })
        .then((r) => r.json)) as { ticket: string };
      await tab.goto(`${other.origin}/`);
      const tried = await tab.evaluate(
        async ([base, token, ticket]) => {
          const fetched = await fetch(`${base}/plants/changes/tickets`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}` },
          }).then(
            (r) => `answered ${r.status}`,
            (e: unknown) => `refused: ${String(e)}`,
          );
          const streamed = await new Promise<string>((resolve) => {
            const source = new EventSource(`${base}/plants/changes?ticket=${ticket}`);
            source.onopen = () => resolve('opened');
            source.onerror = () => {
              source.close();
              resolve('failed');
            };
          });
          return { fetched, streamed };
        },
        [api, app.token, made.ticket],
      );
      assert.match(tried.fetched, /^refused: TypeError/);
      assert.equal(tried.streamed, 'failed');
    } finally {
      other.server.close();
    }
  });

  it('gets a new ticket when one has expired, and loses and repeats nothing', async () => {
    // The first ticket the page is handed expired a second ago.
    const old = await createTicket(
      app.services.store,
      { tokenHash: (await app.services.store.tokens.list())[0]!.hash, subject: null, scopes: [] },
      Date.now() - TICKET_TTL_MS - 1000,
    );
    let handed = 0;
    await tab.route('**/plants/changes/tickets', async (route) => {
      if (handed++ > 0) return route.continue();
      const real = await route.fetch();
      const body = JSON.stringify({ ...(await real.json()), ticket: old.ticket });
      await route.fulfill({ response: real, body });
    });
    await tab.goto(`${origin}/`);
    await tab.evaluate(`follow(${JSON.stringify(app.token)})`);
    await tab.waitForFunction('window.opened === 1', undefined, { timeout: 10_000 });
    assert.equal(handed, 2, 'the expired ticket was refused and a second one asked for');

    const positions: string[] = [];
    for (let id = 1; id <= 5; id++) {
      const r = await postPlant(api, app.token, JSON.stringify({ id, name: `plant ${id}` }));
      positions.push(r.headers['change-position'] as string);
    }
    await tab.waitForFunction('window.received.length === 5', undefined, { timeout: 10_000 });
    const received = await tab.evaluate<{ id: string; data: string }[]>('window.received');
    assert.deepEqual(
      received.map((r) => r.id),
      positions,
    );
    const urls = app.logs.filter((l) => l.includes('/plants/changes?'));
    assert.ok(urls.length >= 1 && urls.every((l) => l.includes('ticket=[redacted]')), urls.join('\n'));
  });
});
