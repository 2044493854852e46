import { randomBytes } from 'node:crypto';
import { TICKET_PREFIX, TICKET_TTL_MS, type TicketRecord } from '../domain/ticket.js';
import { hashToken } from '../domain/token.js';
import type { Store } from '../store/store.js';

/** Who a ticket speaks for: a managed token (by its hash), or an identity provider's subject and scopes. */
export type TicketHolder = Pick<TicketRecord, 'tokenHash' | 'subject' | 'scopes'>;

/**
 * A new stream ticket for `holder`: 256 random bits, kept only as their hash, good for opening
 * streams for TICKET_TTL_MS, and never past `notAfter` (an identity provider's token ends then,
 * and what it made ends with it). The ticket itself is answered once and never stored.
 */
export async function createTicket(
  { tokens }: Pick<Store, 'tokens'>,
  holder: TicketHolder,
  now = Date.now(),
  notAfter?: Date,
): Promise<{ ticket: string; expiresAt: Date }> {
  const ticket = TICKET_PREFIX + randomBytes(32).toString('base64url');
  const expiresAt = new Date(Math.min(now + TICKET_TTL_MS, notAfter?.getTime() ?? Infinity));
  await tokens.insertTicket({ ...holder, hash: hashToken(ticket), expiresAt });
  return { ticket, expiresAt };
}
