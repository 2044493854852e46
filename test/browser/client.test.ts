// @plant-store/client in a browser: the files npm installed from the packed package, loaded by
// Chromium as ES modules (an import map names openapi-fetch, as a bundler would resolve it), from
// the service's own origin, calling the service: ids past 2^53 exact, PATCH, paging by Link.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TICKET_TTL_MS } from '../../src/domain/ticket.js';
import { createTicket } from '../../src/use-cases/create-ticket.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { send } from '../support/http.js';
import { packAndInstallClient, type PackedClient } from '../support/packed-client.js';
import { failWithoutChromium, launchChromium, skipWithoutChromium } from '../support/chromium.js';

// Where the page finds the installed packages: /modules/<path under the project's node_modules>.
const page = (token: string) => `<!doctype html><meta charset="utf-8"><title>client</title>
<script type="importmap">{"imports": {
  "@plant-store/client": "/modules/@plant-store/client/dist/client/index.js",
  "openapi-fetch": "/modules/openapi-fetch/dist/index.mjs"
}}</script>
<script type="module">
  import { allPlants, createPlantStoreClient } from '@plant-store/client';
  try {
    const client = createPlantStoreClient({ baseUrl: location.origin, token: ${JSON.stringify(token)} });
    const big = 9223372036854775807n;
    const created = await client.POST('/plants', { body: { id: big, name: 'Monstera', tag: 'browser' } });
    await client.POST('/plants', { body: { id: 1, name: 'Fern', tag: 'browser' } });
    await client.POST('/plants', { body: { id: 2, name: 'Ivy' } });
    const patched = await client.PATCH('/plants/{id}', { params: { path: { id: big } }, body: { name: 'Swiss cheese plant' } });
    const listed = [];
    for await (const plant of allPlants(client, { tag: ['browser'], limit: 1 })) listed.push(plant.id + ' ' + typeof plant.id);
    window.result = { created: created.response.status, patched: patched.data, listed };
  } catch (err) {
    window.result = { error: String(err) };
  }
</script>`;

// followChangesInBrowser: the store as of one position, then its changes, through stream tickets.
const followPage = (token: string) => `<!doctype html><meta charset="utf-8"><title>follow</title>
<script type="importmap">{"imports": {
  "@plant-store/client": "/modules/@plant-store/client/dist/client/index.js",
  "openapi-fetch": "/modules/openapi-fetch/dist/index.mjs"
}}</script>
<script type="module">
  import { followChangesInBrowser } from '@plant-store/client';
  window.seen = { snapshots: 0, plants: [], synced: undefined, changes: [], errors: [] };
  followChangesInBrowser({
    baseUrl: location.origin,
    token: ${JSON.stringify(token)},
    snapshot: true,
    retryMs: 100,
    onSnapshot: () => { window.seen.snapshots++; window.seen.plants = []; },
    onPlant: (p) => window.seen.plants.push(p.id + ' ' + typeof p.id),
    onSynced: (position) => (window.seen.synced = position),
    onChange: (c) => window.seen.changes.push(c.type + ' ' + c.id),
    onError: (e) => window.seen.errors.push(String(e)),
  });
</script>`;

const options = { skip: skipWithoutChromium, timeout: 600_000 };
describe('@plant-store/client in Chromium, installed from npm pack', options, () => {
  if (failWithoutChromium()) return;
  let packed: PackedClient;
  let server: TestApp;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  before(async () => {
    [packed, server, browser] = await Promise.all([packAndInstallClient(), buildTestApp(), launchChromium()]);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    packed?.dispose();
  });

  it('creates, patches and pages through plants, ids past 2^53 as bigint', async () => {
    const url = await server.listen();
    const tab = browser.context.pages()[0] ?? (await browser.context.newPage());
    await tab.route(`${url}/client.html`, (route) =>
      route.fulfill({ contentType: 'text/html', body: page(server.token) }),
    );
    await tab.route(`${url}/modules/**`, (route) => {
      const path = new URL(route.request().url()).pathname.slice('/modules/'.length);
      const body = readFileSync(join(packed.project, 'node_modules', path));
      return route.fulfill({ contentType: 'text/javascript', body });
    });
    const requested: string[] = [];
    tab.on('request', (request) => requested.push(request.url()));

    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(String(error)));

    await tab.goto(`${url}/client.html`);
    await tab
      .waitForFunction('window.result !== undefined', undefined, { timeout: 20_000 })
      .catch(() => assert.fail(`the page's script never finished: ${errors.join('; ') || 'no error'}`));
    assert.deepEqual(await tab.evaluate('window.result'), {
      created: 200,
      patched: { name: 'Swiss cheese plant', tag: 'browser' },
      listed: ['1 number', '9223372036854775807 bigint'],
    });
    // The page loaded nothing from elsewhere, and asked for the second page as its Link wrote it.
    assert.deepEqual(
      requested.filter((r) => !r.startsWith(`${url}/`)),
      [],
    );
    assert.deepEqual(
      requested.filter((r) => r.startsWith(`${url}/plants?`)),
      [`${url}/plants?tag=browser&limit=1`, `${url}/plants?limit=1&tag=browser&after=1`],
    );
  });

  it('follows the store from the page with stream tickets: a snapshot, synced, then each change once', async () => {
    // Listening since the test before (the same plants).
    const url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
    const tab = browser.context.pages()[0] ?? (await browser.context.newPage());
    await tab.route(`${url}/follow.html`, (route) =>
      route.fulfill({ contentType: 'text/html', body: followPage(server.token) }),
    );
    // The first ticket the page is handed has expired: the helper gets another and starts again.
    const old = await createTicket(
      server.services.store,
      { tokenHash: (await server.services.store.tokens.list())[0]!.hash, subject: null, scopes: [] },
      Date.now() - TICKET_TTL_MS - 1000,
    );
    let handed = 0;
    await tab.route(`${url}/plants/changes/tickets`, async (route) => {
      if (handed++ > 0) return route.continue();
      const real = await route.fetch();
      await route.fulfill({ response: real, body: JSON.stringify({ ...(await real.json()), ticket: old.ticket }) });
    });
    await tab.goto(`${url}/follow.html`);
    await tab.waitForFunction('window.seen?.synced !== undefined', undefined, { timeout: 20_000 });
    await send(url, {
      method: 'POST',
      path: '/plants',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: '{"id":3,"name":"Pothos"}',
    });
    await tab.waitForFunction('window.seen.changes.length === 1', undefined, { timeout: 10_000 });
    const seen = (await tab.evaluate('window.seen')) as { snapshots: number; plants: string[]; changes: string[] };
    assert.equal(handed, 2, 'the expired ticket was refused and another asked for');
    assert.deepEqual(seen.plants.sort(), ['1 number', '2 number', '9223372036854775807 bigint']);
    assert.deepEqual(seen.changes, ['created 3']);
  });
});
