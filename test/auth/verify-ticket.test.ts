// verifyTicket alone, on records made in memory: what a ticket stands for when a stream opens and
// when it is checked again, for a managed token's ticket and for an identity provider's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { verifyTicket } from '../../src/auth/verify-ticket.js';
import { UnauthenticatedError } from '../../src/domain/errors.js';
import type { TicketRecord } from '../../src/domain/ticket.js';
import { hashToken, type TokenRecord } from '../../src/domain/token.js';

const TICKET = `pstt_${'a'.repeat(43)}`;
const now = new Date('2026-11-29T12:00:00Z');
const minutes = (n: number) => new Date(now.getTime() + n * 60_000);
const token: TokenRecord = {
  id: 't1',
  name: 'page',
  hash: 'h1',
  prefix: '',
  scopes: ['plants:read'],
  createdAt: minutes(-60),
  expiresAt: null,
  revokedAt: null,
};
const lookups = (ticket: Partial<TicketRecord>, tokenRecord: TokenRecord | undefined = token) => ({
  findTicket: async (hash: string) =>
    hash === hashToken(TICKET)
      ? { hash, tokenHash: 'h1', subject: null, scopes: [], expiresAt: minutes(5), ...ticket }
      : undefined,
  findToken: async (hash: string) => (hash === 'h1' ? tokenRecord : undefined),
});
const refused = (message: RegExp) => (err: unknown) => err instanceof UnauthenticatedError && message.test(err.message);

describe('verifyTicket', () => {
  it("stands for its token, with the token's scopes as they are now", async () => {
    const p = await verifyTicket(TICKET, lookups({}), true, now);
    assert.deepEqual(p, { kind: 'token', id: 't1', scopes: ['plants:read'], limitKey: 'token:h1' });
  });

  it('opens nothing once expired, but a stream it opened lives while its token is valid', async () => {
    const expired = lookups({ expiresAt: minutes(-1) });
    await assert.rejects(verifyTicket(TICKET, expired, true, now), refused(/expired: get a new one/));
    assert.equal((await verifyTicket(TICKET, expired, false, now)).id, 't1');
  });

  it('goes with its token: revoked or expired, at opening and at every check', async () => {
    for (const opening of [true, false]) {
      const revoked = lookups({}, { ...token, revokedAt: minutes(-1) });
      await assert.rejects(verifyTicket(TICKET, revoked, opening, now), refused(/revoked/));
      const gone = lookups({}, { ...token, expiresAt: minutes(-1) });
      await assert.rejects(verifyTicket(TICKET, gone, opening, now), refused(/has expired/));
    }
  });

  // JWT mode on: a JWT verifier is there (never called: the ticket's record says what the JWT was).
  const jwtMode = (ticket: Partial<TicketRecord>) => ({ ...lookups(ticket), verifyJwt: async () => assert.fail() });

  it("an identity provider's ticket keeps its subject and scopes, and its streams end with it", async () => {
    const jwt = { tokenHash: null, subject: 'alice', scopes: ['plants:read' as const] };
    const p = await verifyTicket(TICKET, jwtMode(jwt), false, now);
    assert.deepEqual(p, { kind: 'jwt', id: 'alice', scopes: ['plants:read'], limitKey: 'jwt:alice' });
    await assert.rejects(
      verifyTicket(TICKET, jwtMode({ ...jwt, expiresAt: minutes(-1) }), false, now),
      refused(/expired/),
    );
  });

  it("an identity provider's ticket opens and keeps nothing where JWT mode is off", async () => {
    const jwt = { tokenHash: null, subject: 'alice', scopes: ['plants:read' as const] };
    for (const opening of [true, false]) {
      await assert.rejects(verifyTicket(TICKET, lookups(jwt), opening, now), refused(/does not accept/));
    }
  });

  it('refuses an unknown or malformed ticket', async () => {
    await assert.rejects(verifyTicket(`pstt_${'b'.repeat(43)}`, lookups({}), true, now), refused(/not valid/));
    await assert.rejects(verifyTicket('pstt_x', lookups({}), true, now), refused(/malformed/));
    await assert.rejects(verifyTicket(`pst_${'a'.repeat(43)}`, lookups({}), true, now), refused(/malformed/));
  });
});
