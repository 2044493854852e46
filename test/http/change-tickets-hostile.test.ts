// Stream tickets tried as an attacker would, on both stores (a ticket is looked up in the store):
// a good ticket on every operation but the stream, or on a near miss of the stream's path; a
// flood of ticket requests; tickets guessed, and a ticket passed off as a token; tickets where a
// log could catch them. What test/http/change-tickets.test.ts tries already (an expired,
// unknown or malformed ticket, a replay after its token is revoked, a page of changes) is not
// repeated here.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadDocument } from '../../src/openapi/document.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { openEventStream } from '../support/event-stream.js';
import { pollUntil } from '../support/poll.js';
import { assert429 } from '../support/rate-limited.js';
import { stores, suiteOptions } from '../support/stores.js';

const PAGE = 'http://127.0.0.1:5173';
const LIMIT = 6;
const FAILURES = 4;
const WINDOW_SECONDS = 60;
const STREAM = 'text/event-stream';

for (const kind of stores) {
  describe(`stream tickets, as an attacker tries them [${kind}]`, suiteOptions(kind), () => {
    let app: TestApp;
    /** Every ticket this suite made or guessed: none may ever reach the log. */
    const seen: string[] = [];
    before(async () => {
      app = await buildTestApp({
        store: kind,
        logs: true,
        env: {
          CORS_ORIGINS: PAGE,
          RATE_LIMIT_PER_WINDOW: String(LIMIT),
          AUTH_FAILURE_LIMIT_PER_WINDOW: String(FAILURES),
          RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
        },
      });
    });
    after(async () => app?.close());

    /** A fresh token (its own rate limit), and a ticket made with it. */
    const ticketOfNewToken = async () => {
      const { token } = await createToken(app.services.store, { name: 'page', scopes: ['plants:read'] });
      const r = await app.inject({
        method: 'POST',
        path: '/plants/changes/tickets',
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(r.status, 201, r.text);
      const { ticket } = r.json as { ticket: string };
      seen.push(ticket);
      return { token, ticket };
    };
    const stream = (path: string, headers: Record<string, string> = {}) =>
      app.inject({ path, headers: { accept: STREAM, ...headers } });

    it('refuses a good ticket on every operation but the stream, and on near misses of its path', async () => {
      const { ticket } = await ticketOfNewToken();
      const credentialed = [...loadDocument().operations.values()].filter((op) => op.scopes !== undefined);
      const tried = credentialed.flatMap(({ method, path }) =>
        (method === 'GET' ? ['GET', 'HEAD'] : [method]).map((m) => [m, path.replace('{id}', '42')] as const),
      );
      assert.ok(tried.length >= 10, `${tried.length} operations`);
      for (const [method, path] of tried) {
        for (const accept of ['application/json', STREAM]) {
          if (method === 'GET' && path === '/plants/changes' && accept === STREAM) continue;
          const r = await app.inject({ method, path: `${path}?ticket=${ticket}`, headers: { accept } });
          assert.equal(r.status, 401, `${method} ${path} (${accept}): ${r.text}`);
          if (method !== 'HEAD') assert.match((r.json as { message: string }).message, /a ticket opens only/);
        }
      }
      // (A trailing slash or a doubled one is 404 before any credential is read.)
      for (const path of ['/plants/changes;x', '/Plants/changes', '/plants/changes/tickets']) {
        const r = await stream(`${path}?ticket=${ticket}`);
        assert.ok([401, 404, 405].includes(r.status), `${path}: ${r.status} ${r.text}`);
      }
    });

    it('limits a flood of ticket requests as any request: 429, readable by a page', async () => {
      const { token } = await ticketOfNewToken();
      const ask = () =>
        app.inject({
          method: 'POST',
          path: '/plants/changes/tickets',
          headers: { authorization: `Bearer ${token}`, origin: PAGE },
        });
      for (let left = LIMIT - 2; left >= 0; left--) {
        const r = await ask();
        assert.equal(r.status, 201, r.text);
        assert.equal(r.headers['ratelimit-remaining'], String(left));
        seen.push((r.json as { ticket: string }).ticket);
      }
      const refused = await ask();
      assert429(refused, LIMIT, WINDOW_SECONDS);
      assert.equal(refused.headers['access-control-allow-origin'], PAGE);
    });

    // Last: it leaves this address blocked for the window.
    it('answers a guessed ticket, or a ticket sent as a token, 401 invalid_token; guessing is limited', async () => {
      const { ticket } = await ticketOfNewToken();
      const guesses = Array.from({ length: FAILURES - 1 }, () => `pstt_${randomBytes(32).toString('base64url')}`);
      seen.push(...guesses);
      const tries = [
        ...guesses.map((guess) => () => stream(`/plants/changes?ticket=${guess}`)),
        () => app.inject({ path: '/plants', headers: { authorization: `Bearer ${ticket}` } }),
      ];
      for (const attempt of tries) {
        const r = await attempt();
        assert.equal(r.status, 401, r.text);
        assert.match(String(r.headers['www-authenticate']), /error="invalid_token"/);
      }
      // Past the refused credentials an address may send, 429; even a good ticket is not looked at.
      const blocked = await stream(`/plants/changes?ticket=pstt_${randomBytes(32).toString('base64url')}`);
      assert429(blocked, FAILURES, WINDOW_SECONDS);
      assert.match((blocked.json as { message: string }).message, /too many refused credentials from this address/);
      const good = await openEventStream(await app.listen(), '', `/plants/changes?ticket=${ticket}`);
      good.close();
      assert.equal(good.status, 429);
    });

    it('never writes a ticket to the log, wherever in the URL it is put', async () => {
      const [ticket, other] = seen;
      for (const path of [
        `/plants/changes?%74icket=${ticket}`,
        `/plants/changes?ticket=${ticket}&ticket=${other}`,
        `/plants?q=${ticket}`,
        `/plants/changes?after=${encodeURIComponent(ticket!)}`,
      ]) {
        await app.inject({ path });
      }
      assert.ok(await pollUntil(async () => app.logs.some((l) => l.includes('?after=')), 2000));
      const log = app.logs.join('\n');
      for (const t of seen) assert.ok(!log.includes(t.slice('pstt_'.length)), `${t} is in the log`);
      assert.ok(
        app.logs.some((l) => l.includes('ticket=[redacted]')),
        'the request lines were logged',
      );
    });
  });
}
