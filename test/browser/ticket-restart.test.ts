// A page on its own origin follows the store through a server restart with one stream ticket:
// the process stops (SIGTERM) and starts again on the same store and port; the browser's
// EventSource reconnects by itself with the same URL (its ticket still good) and Last-Event-ID,
// and every change arrives once, in order. The process is the subject: it is spawned.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { postPlant, send } from '../support/http.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { followPage } from './follow-page.js';
import { servePage } from './page-origin.js';

describe('a page follows the store with one ticket through a server restart', { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  let dir: string;
  let pages: Server;
  let origin: string;
  let server: ServerProcess;
  let browser: Browser;
  let tab: Page;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-ticket-restart-'));
    ({ server: pages, origin } = await servePage(() => followPage(server.url)));
    server = await startServer({ dataDir: dir, env: { CORS_ORIGINS: origin } });
    browser = await launchChromium();
    tab = browser.page;
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    pages?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reconnects with the same ticket and receives every change once, in order', async () => {
    const tickets: string[] = [];
    tab.on('request', (r) => r.url().endsWith('/plants/changes/tickets') && tickets.push(r.method()));
    const from = (
      await send(server.url, { path: '/plants?limit=1', headers: { authorization: `Bearer ${server.token}` } })
    ).headers['change-position'] as string;
    await tab.goto(`${origin}/`);
    await tab.evaluate(`follow(${JSON.stringify(server.token)})`);
    await tab.waitForFunction('window.opened === 1', undefined, { timeout: 10_000 });
    assert.equal((await postPlant(server.url, server.token, '{"id":1,"name":"before"}')).status, 200);
    await tab.waitForFunction('window.received.length === 1', undefined, { timeout: 10_000 });

    const port = Number(new URL(server.url).port);
    assert.equal(await server.stop(), 0);
    server = await startServer({ dataDir: dir, port, token: server.token, env: { CORS_ORIGINS: origin } });
    for (let id = 2; id <= 4; id++) {
      assert.equal((await postPlant(server.url, server.token, JSON.stringify({ id, name: 'after' }))).status, 200);
    }
    await tab.waitForFunction('window.received.length >= 4', undefined, { timeout: 15_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));

    const log = await send(server.url, {
      path: `/plants/changes?after=${from}&limit=1000`,
      headers: { authorization: `Bearer ${server.token}` },
    });
    const expected = (log.json as { position: number }[]).map((c) => String(c.position));
    const got = (await tab.evaluate<{ id: string }[]>('window.received')).map((r) => r.id);
    assert.deepEqual(got, expected);
    assert.equal(await tab.evaluate('window.opened'), 2, 'opened again by EventSource itself');
    assert.deepEqual(tickets, ['POST'], 'one ticket: the reconnection reused it');
  });
});
