import { UnauthenticatedError } from '../domain/errors.js';
import { TICKET_SHAPE } from '../domain/ticket.js';
import { hashToken, isActive } from '../domain/token.js';
import type { FindTicket, FindToken } from './token-cache.js';
import type { Principal } from './verify-bearer.js';

const refused = (why: string) => new UnauthenticatedError(why, true);

/**
 * The principal a stream ticket stands for. `opening`: a stream is being opened (or reopened),
 * which the ticket allows until it expires; else a stream it opened is being checked again, which
 * lives while the token that made the ticket is valid. The token's rights are read now, so
 * revoking it, expiring it or taking a scope from it reaches the ticket at once. A ticket made
 * by an identity provider's token keeps that token's scopes, and its streams end with it.
 */
export async function verifyTicket(
  ticket: string,
  { findTicket, findToken, verifyJwt }: { findTicket: FindTicket; findToken: FindToken; verifyJwt?: unknown },
  opening: boolean,
  now = new Date(),
): Promise<Principal> {
  if (!TICKET_SHAPE.test(ticket)) throw refused('the ticket is malformed');
  const hash = hashToken(ticket);
  const record = await findTicket(hash);
  if (!record) throw refused('the ticket is not valid');
  const expired = record.expiresAt <= now;
  if (record.tokenHash === null) {
    // It has no more rights than the token that made it: where identity providers' tokens are not
    // accepted (JWT mode off, on this instance or since the ticket was made), neither is it.
    if (!verifyJwt)
      throw refused("the ticket was made with an identity provider's token, which this server does not accept");
    if (expired) throw refused('the ticket has expired: get a new one with POST /plants/changes/tickets');
    return {
      kind: 'jwt',
      id: record.subject ?? undefined,
      scopes: record.scopes,
      limitKey: `jwt:${record.subject ?? hash}`,
    };
  }
  if (opening && expired) throw refused('the ticket has expired: get a new one with POST /plants/changes/tickets');
  return verifyTicketToken(record.tokenHash, { findToken }, now);
}

/**
 * The principal of the managed token (by its hash) that made a ticket: a stream its ticket opened
 * is checked again by this, not by the ticket, whose record is forgotten a day after it expires
 * while the stream lives as long as the token.
 */
export async function verifyTicketToken(
  tokenHash: string,
  { findToken }: { findToken: FindToken },
  now = new Date(),
): Promise<Principal> {
  const token = await findToken(tokenHash);
  if (!token) throw refused('the ticket is not valid');
  if (token.revokedAt !== null) throw refused('the token that made the ticket has been revoked');
  if (!isActive(token, now)) throw refused('the token that made the ticket has expired');
  return { kind: 'token', id: token.id, scopes: token.scopes, limitKey: `token:${tokenHash}` };
}
