// The page of jwt-page.ts (a second origin, in CORS_ORIGINS, JWT mode) follows the store with
// EventSource and stream tickets through a ticket expiry and a server restart. Its first access
// token is about to end, and a ticket made with it ends with it (the JWT's exp plus the 30 s of
// clock tolerance, sooner than a ticket's 5 minutes): the server closes the stream, EventSource's
// reconnection is refused (401), and the page renews its token, gets a new ticket and opens again
// after the last change it showed. Then the process stops (SIGTERM) and starts again on the same
// store and port, and EventSource reconnects by itself with that ticket. Plants are written
// before, in the gaps and after: every change shows once, in order, as the store's log has them.
// The process is the subject of the restart: it is spawned.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { failWithoutChromium, launchChromium, skipWithoutChromium, type Browser } from '../support/chromium.js';
import { postPlant, send } from '../support/http.js';
import * as idp from '../support/identity-provider.js';
import { pollUntil } from '../support/poll.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { jwtPage } from './jwt-page.js';
import { servePage } from './page-origin.js';

/** The first token's `exp`, from now: accepted 30 s past it, so it (and its ticket) ends in about 5 s. */
const ENDING_SOON_S = -25;

describe(
  'a page signed in with JWTs follows the store through a ticket expiry and a restart',
  {
    skip: skipWithoutChromium,
  },
  () => {
    if (failWithoutChromium()) return;
    let dir: string;
    let key: idp.SigningKey;
    let jwks: idp.JwksServer;
    let page: { server: Server; origin: string };
    let server: ServerProcess;
    let browser: Browser;
    let tab: Page;
    const env = () => ({ ...idp.jwtEnv(jwks), CORS_ORIGINS: page.origin });

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'plant-store-jwt-follow-'));
      key = await idp.newKey('ES256', 'idp-1');
      jwks = await idp.startJwksServer([key]);
      page = await servePage(() => jwtPage(server.url));
      server = await startServer({ dataDir: dir, env: env() });
      browser = await launchChromium();
      tab = browser.page;
    });
    after(async () => {
      await browser?.close();
      await server?.dispose();
      await jwks?.close();
      page?.server.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    let next = 1;
    /** Writes a plant as another client (the bootstrap token), straight to the service. */
    async function write(): Promise<void> {
      const r = await postPlant(server.url, server.token, JSON.stringify({ id: next++, name: 'Fern' }));
      assert.equal(r.status, 200);
    }
    /** Writes a plant every 200 ms until the page has opened its stream `times` times, then one more. */
    async function writeUntilOpened(times: number): Promise<void> {
      const deadline = Date.now() + 20_000;
      while ((await tab.evaluate('window.opened')) !== times) {
        assert.ok(Date.now() < deadline, `the page did not open its stream a ${times}th time`);
        await write();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await write();
    }

    it('shows every change once, in order, renewing its token and ticket as they end', async () => {
      let renewed = 0;
      await tab.exposeFunction('renewToken', () =>
        idp.signToken(key, {
          subject: 'carol',
          claims: { scope: 'plants:read' },
          expiresIn: renewed++ === 0 ? ENDING_SOON_S : 3600,
        }),
      );
      const streams: number[] = [];
      tab.on('response', (r) => r.url().includes('/plants/changes?') && streams.push(r.status()));
      const from = (
        await send(server.url, { path: '/plants?limit=1', headers: { authorization: `Bearer ${server.token}` } })
      ).headers['change-position'] as string;

      await tab.goto(`${page.origin}/`);
      await tab.getByRole('button', { name: 'Follow' }).click();
      await tab.waitForFunction('window.opened === 1', undefined, { timeout: 10_000 });
      await write();
      const changes = tab.getByRole('list', { name: 'changes' }).getByRole('listitem');
      await changes.first().waitFor({ timeout: 10_000 });

      // The first ticket ends with its token: writes go on while the stream is closed and reopened.
      await writeUntilOpened(2);
      assert.equal(renewed, 2, 'a second token was asked of the identity provider');

      await write();
      const port = Number(new URL(server.url).port);
      assert.equal(await server.stop(), 0);
      server = await startServer({ dataDir: dir, port, token: server.token, env: env() });
      await writeUntilOpened(3);

      const log = await send(server.url, {
        path: `/plants/changes?after=${from}&limit=1000`,
        headers: { authorization: `Bearer ${server.token}` },
      });
      const expected = (log.json as { type: string; id: number; position: number }[]).map(
        (c) => `${c.type} ${c.id} at ${c.position}`,
      );
      assert.equal(expected.length, next - 1);
      // Waiting for as many as were written, then a moment more: a change shown twice would come last.
      await pollUntil(async () => (await changes.count()) >= expected.length, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(await changes.allTextContents(), expected);
      assert.deepEqual(streams, [200, 401, 200, 200], 'opened, its ticket refused once expired, opened, reopened');
      assert.equal(renewed, 2, 'the restart needed no new token, nor a new ticket');
    });
  },
);
