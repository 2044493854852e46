import type { Scope } from './token.js';

/**
 * Stream tickets (`POST /plants/changes/tickets`): a short-lived credential that opens the changes
 * stream from a page, whose EventSource cannot send Authorization. `pstt_` and 43 base64url
 * characters (256 random bits), kept only as its SHA-256, like a token.
 */
export const TICKET_PREFIX = 'pstt_';
/** A ticket opens streams (reconnections included) for this long after it is made. */
export const TICKET_TTL_MS = 5 * 60_000;
/** Kept this long past its expiry: a stream it opened is checked against its token meanwhile. */
export const TICKET_KEPT_MS = 24 * 60 * 60_000;

export const TICKET_SHAPE = /^pstt_[A-Za-z0-9_-]{43}$/;

export interface TicketRecord {
  /** SHA-256 of the ticket, hex. */
  hash: string;
  /** The managed token that made it (its hash): the ticket has its rights while it is valid. */
  tokenHash: string | null;
  /** An identity provider's token made it: its subject, and its scopes when it did. */
  subject: string | null;
  scopes: Scope[];
  expiresAt: Date;
}
