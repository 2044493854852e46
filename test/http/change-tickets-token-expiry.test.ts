// A ticket's expiresAt is "when it stops opening streams" (the contract's ChangesTicket): made by
// a managed token that expires within the ticket's 5 minutes, the ticket stops with that token, so
// its expiresAt must say so, or a page (followChangesInBrowser) trusts a ticket already void.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TICKET_TTL_MS } from '../../src/domain/ticket.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const kind of stores) {
  describe(`a stream ticket and its token's expiry [${kind}]`, suiteOptions(kind), () => {
    let app: TestApp;
    before(async () => {
      app = await buildTestApp({ store: kind });
    });
    after(async () => app?.close());

    const ticketFor = async (token: string) => {
      const r = await app.inject({
        method: 'POST',
        path: '/plants/changes/tickets',
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(r.status, 201);
      return r.json as { ticket: string; expiresAt: string };
    };

    it('expires no later than the token that made it', async () => {
      const tokenEnds = new Date(Date.now() + 60_000);
      const { token } = await createToken(app.services.store, { name: 'short', expiresAt: tokenEnds });
      const { expiresAt } = await ticketFor(token);
      assert.ok(
        Date.parse(expiresAt) <= tokenEnds.getTime(),
        `the ticket says ${expiresAt}, the token ends ${tokenEnds.toISOString()}`,
      );
    });

    it('keeps its 5 minutes when the token lives longer', async () => {
      const { token } = await createToken(app.services.store, {
        name: 'long',
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      const left = Date.parse((await ticketFor(token)).expiresAt) - Date.now();
      assert.ok(left > TICKET_TTL_MS - 10_000 && left <= TICKET_TTL_MS, `expires in ${left} ms`);
    });
  });
}
