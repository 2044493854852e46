// The change feed as a browser follows it: Chromium's own EventSource on /plants/changes, while
// the server process stops (SIGTERM) and starts again on the same store and port. The browser
// reconnects by itself with Last-Event-ID and gets every change once, in position order.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { send } from '../support/http.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { startBearerProxy, type BearerProxy } from './bearer-proxy.js';
import { failWithoutChromium, launchChromium, skipWithoutChromium } from './chromium.js';

// Each event as the page received it: its id (the position) and its data (the change's JSON).
const PAGE = `<!doctype html><meta charset="utf-8"><title>changes</title><script>
  window.received = [];
  window.opened = 0;
  const source = new EventSource('/plants/changes');
  for (const type of ['created', 'updated', 'deleted'])
    source.addEventListener(type, (e) => window.received.push({ id: e.lastEventId, type: e.type, data: e.data }));
  source.onopen = () => window.opened++;
</script>`;

interface Received {
  id: string;
  type: string;
  data: string;
}

describe('a browser EventSource on GET /plants/changes across a server restart', { skip: skipWithoutChromium }, () => {
  if (failWithoutChromium()) return;
  let dir: string;
  let server: ServerProcess;
  let proxy: BearerProxy;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;

  const post = (id: number, name: string) =>
    send(server.url, {
      method: 'POST',
      path: '/plants',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name }),
    });
  const received = () => page.evaluate<Received[]>('window.received');
  const waitFor = (expression: string) => page.waitForFunction(expression, undefined, { timeout: 10_000 });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-browser-feed-'));
    server = await startServer({ dataDir: dir });
    proxy = await startBearerProxy(() => new URL(server.url), server.token, PAGE);
    browser = await launchChromium();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  after(async () => {
    await browser?.close();
    await proxy?.close();
    await server?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reconnects by itself with Last-Event-ID and receives every change once, in order', async () => {
    const first = await send(server.url, {
      method: 'GET',
      path: '/plants?limit=1',
      headers: { authorization: `Bearer ${server.token}` },
    });
    const from = first.headers['change-position'] as string;
    await page.goto(`${proxy.url}/`);
    await waitFor('window.opened === 1');
    assert.equal((await post(1, 'Before the restart')).status, 200);
    await waitFor('window.received.length === 1');
    const [before] = await received();

    // The server drains: its streams end, and the browser tries again after the `retry:` the
    // stream gave it (a second), as often as it takes while the server is away.
    const port = Number(new URL(server.url).port);
    assert.equal(await server.stop(), 0);
    server = await startServer({ dataDir: dir, port, token: server.token });
    for (let id = 2; id <= 4; id++) assert.equal((await post(id, `After the restart ${id}`)).status, 200);
    await waitFor('window.received.length >= 4');
    // Time for a duplicate to show up, were one coming.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const log = await send(server.url, {
      method: 'GET',
      path: `/plants/changes?after=${from}&limit=1000`,
      headers: { authorization: `Bearer ${server.token}` },
    });
    const expected = log.json as { position: number; type: string }[];
    const got = await received();
    assert.deepEqual(
      got.map((e) => JSON.parse(e.data) as unknown),
      expected,
    );
    assert.deepEqual(
      got.map((e) => [e.id, e.type]),
      expected.map((c) => [String(c.position), c.type]),
    );
    // Every later request of the feed is the browser's own reconnection (one, or more while the
    // server was still starting), from the last event it had.
    assert.ok(proxy.feedRequests.length >= 2);
    assert.equal(proxy.feedRequests[0]!['last-event-id'], undefined);
    for (const again of proxy.feedRequests.slice(1)) assert.equal(again['last-event-id'], before!.id);
    assert.equal(await page.evaluate('window.opened'), 2);
  });
});
