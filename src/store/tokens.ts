import type { TokenRecord } from '../domain/token.js';
import type { TicketRecord } from '../domain/ticket.js';

/**
 * The managed API tokens: `token create`, `list` and `revoke`, and every request's look-up by
 * hash. Each change resolves once durable.
 */
export interface TokenStore {
  insert(token: TokenRecord): Promise<void>;
  findByHash(hash: string): Promise<TokenRecord | undefined>;
  /** Every token, oldest first. */
  list(): Promise<TokenRecord[]>;
  count(): Promise<number>;
  /** Resolves to false when no token has this id. Revoking twice keeps the first time. */
  revoke(id: string, at: Date): Promise<boolean>;
  /** Keeps a stream ticket (by its hash), and forgets those a day past their expiry. */
  insertTicket(ticket: TicketRecord): Promise<void>;
  findTicket(hash: string): Promise<TicketRecord | undefined>;
}
