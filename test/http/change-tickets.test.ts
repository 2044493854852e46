// Stream tickets on both stores, as a page uses them: POST /plants/changes/tickets with a token,
// then the changes stream opened with ?ticket= and no Authorization; the ticket is kept only as
// its hash, opens nothing else, expires, goes with its token (its streams closed within a
// second), never reaches the log; on PostgreSQL a ticket made by one instance opens a stream on
// another.
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { hashToken } from '../../src/domain/token.js';
import { TICKET_KEPT_MS, TICKET_TTL_MS } from '../../src/domain/ticket.js';
import { RECHECK_MS } from '../../src/feed/index.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { createTicket } from '../../src/use-cases/create-ticket.js';
import { revokeToken } from '../../src/use-cases/revoke-token.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { openEventStream } from '../support/event-stream.js';
import { postPlant, send } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const kind of stores) {
  describe(`stream tickets [${kind}]`, suiteOptions(kind), () => {
    let app: TestApp;
    let base: string;
    before(async () => {
      app = await buildTestApp({ store: kind, logs: true });
      base = await app.listen();
    });
    after(async () => app?.close());

    const ticketFor = async (token: string) => {
      const r = await app.inject({
        method: 'POST',
        path: '/plants/changes/tickets',
        headers: { authorization: `Bearer ${token}` },
      });
      return r;
    };
    const withTicket = (ticket: string, path = '/plants/changes') =>
      openEventStream(base, '', `${path}${path.includes('?') ? '&' : '?'}ticket=${ticket}`);

    it('gives a ticket that opens the stream without Authorization, kept only as its hash', async () => {
      const r = await ticketFor(app.token);
      assert.equal(r.status, 201);
      assert.equal(r.headers['cache-control'], 'no-store', 'a credential no cache may keep');
      const { ticket, expiresAt } = r.json as { ticket: string; expiresAt: string };
      assert.match(ticket, /^pstt_[A-Za-z0-9_-]{43}$/);
      const left = Date.parse(expiresAt) - Date.now();
      assert.ok(left > TICKET_TTL_MS - 10_000 && left <= TICKET_TTL_MS, `expires in ${left} ms`);
      const kept = await app.services.store.tokens.findTicket(hashToken(ticket));
      assert.ok(kept && !JSON.stringify(kept).includes(ticket.slice(5)), 'kept as its hash only');

      const stream = await withTicket(ticket);
      try {
        assert.equal(stream.status, 200);
        const written = await postPlant(base, app.token, '{"id":61,"name":"Fern"}');
        const at = written.headers['change-position'] as string;
        assert.ok(await pollUntil(async () => stream.events().some(([id]) => id === at), 2000), stream.text());
      } finally {
        stream.close();
      }
      await pollUntil(async () => app.logs.some((l) => l.includes('ticket=[redacted]')), 2000);
      assert.ok(!app.logs.join('\n').includes(ticket.slice(5)), 'the ticket is never written to the log');
    });

    it('opens nothing else: a page of changes, another operation, a ticket with Authorization', async () => {
      const { ticket } = (await ticketFor(app.token)).json as { ticket: string };
      for (const [method, path, accept, status] of [
        ['GET', `/plants/changes?ticket=${ticket}`, 'application/json', 401],
        ['GET', `/plants?ticket=${ticket}`, 'application/json', 401],
        ['POST', `/plants/changes/tickets?ticket=${ticket}`, 'application/json', 401],
        // Operations that take no credential at all refuse one in the query alike.
        ['GET', `/healthz?ticket=${ticket}`, 'application/json', 401],
        ['GET', `/readyz?ticket=${ticket}`, 'application/json', 401],
        ['GET', `/openapi.json?ticket=${ticket}`, 'application/json', 401],
        ['GET', `/docs?ticket=${ticket}`, 'text/html', 401],
        ['GET', `/console?ticket=${ticket}`, 'text/html', 401],
      ] as const) {
        const r = await send(base, { method, path, headers: { accept } });
        assert.equal(r.status, status, path);
        assert.match((r.json as { message: string }).message, /a ticket opens only the changes stream/);
      }
      const both = await send(base, {
        path: `/plants/changes?ticket=${ticket}`,
        headers: { accept: 'text/event-stream', authorization: `Bearer ${app.token}` },
      });
      assert.equal(both.status, 400);
    });

    it('an unknown, malformed or expired ticket is 401; a revoked token voids its tickets and closes their streams', async () => {
      const { token, record } = await createToken(app.services.store, { name: 'page', scopes: ['plants:read'] });
      const old = await createTicket(
        app.services.store,
        { tokenHash: record.hash, subject: null, scopes: [] },
        Date.now() - TICKET_TTL_MS - 1000,
      );
      for (const t of [old.ticket, `pstt_${'A'.repeat(43)}`, 'pstt_short']) {
        const r = await send(base, { path: `/plants/changes?ticket=${t}`, headers: { accept: 'text/event-stream' } });
        assert.equal(r.status, 401, t);
      }
      // An empty ticket is a malformed ticket, not a missing bearer token.
      const empty = await send(base, { path: '/plants/changes?ticket=', headers: { accept: 'text/event-stream' } });
      assert.equal(empty.status, 401);
      assert.match((empty.json as { message: string }).message, /the ticket is malformed/);
      const { ticket } = (await ticketFor(token)).json as { ticket: string };
      const stream = await withTicket(ticket);
      assert.equal(stream.status, 200);
      await revokeToken(app.services.store, record.id);
      const started = Date.now();
      const closed = await Promise.race([
        stream.closed.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 2500)),
      ]);
      stream.close();
      assert.ok(closed, 'the stream was closed within 2.5 s of the revocation');
      assert.ok(Date.now() - started < 2500, `closed ${Date.now() - started} ms after the revocation`);
      const again = await send(base, {
        path: `/plants/changes?ticket=${ticket}`,
        headers: { accept: 'text/event-stream' },
      });
      assert.equal(again.status, 401);
      assert.match((again.json as { message: string }).message, /revoked/);
    });

    it('needs plants:read to make one', async () => {
      const { token } = await createToken(app.services.store, { name: 'metrics', scopes: ['metrics:read'] });
      assert.equal((await ticketFor(token)).status, 403);
      assert.equal((await app.inject({ method: 'POST', path: '/plants/changes/tickets' })).status, 401);
    });

    it('a stream lives as long as its token, after its ticket is forgotten a day past its expiry', async () => {
      const { token, record } = await createToken(app.services.store, { name: 'long', scopes: ['plants:read'] });
      const { ticket } = (await ticketFor(token)).json as { ticket: string };
      const stream = await withTicket(ticket);
      try {
        assert.equal(stream.status, 200);
        // A ticket made more than a day after this one expired forgets it, as any made then would.
        mock.timers.enable({ apis: ['Date'], now: Date.now() + TICKET_TTL_MS + TICKET_KEPT_MS + 60_000 });
        try {
          await createTicket(app.services.store, { tokenHash: record.hash, subject: null, scopes: [] });
        } finally {
          mock.timers.reset();
        }
        assert.ok(!(await app.services.store.tokens.findTicket(hashToken(ticket))), 'its record is forgotten');
        const early = await Promise.race([
          stream.closed.then(() => true),
          new Promise<false>((resolve) => setTimeout(() => resolve(false), 4 * RECHECK_MS)),
        ]);
        assert.equal(early, false, 'still open after four checks of its credential');
        const written = await postPlant(base, app.token, '{"id":62,"name":"Fern"}');
        const at = written.headers['change-position'] as string;
        assert.ok(await pollUntil(async () => stream.events().some(([id]) => id === at), 2000), stream.text());
        // Its token's revocation still closes it.
        await revokeToken(app.services.store, record.id);
        const closed = await Promise.race([
          stream.closed.then(() => true),
          new Promise<false>((resolve) => setTimeout(() => resolve(false), 2500)),
        ]);
        assert.ok(closed, 'closed within 2.5 s of the revocation');
      } finally {
        stream.close();
      }
    });
  });
}

describe('a ticket made by one instance opens a stream on another [postgres]', suiteOptions('postgres'), () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await buildTestApp({ store: 'postgres' });
    b = await buildTestApp({ databaseUrl: a.databaseUrl, token: a.token });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('opens on the other instance', async () => {
    const r = await a.inject({
      method: 'POST',
      path: '/plants/changes/tickets',
      headers: { authorization: `Bearer ${a.token}` },
    });
    const { ticket } = r.json as { ticket: string };
    const stream = await openEventStream(await b.listen(), '', `/plants/changes?ticket=${ticket}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    stream.close();
    assert.equal(stream.status, 200, stream.text());
  });
});
