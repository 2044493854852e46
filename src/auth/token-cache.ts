import type { TicketRecord } from '../domain/ticket.js';
import { hashToken } from '../domain/token.js';
import type { TokenRecord } from '../domain/token.js';
import type { Store } from '../store/store.js';

export type FindToken = (hash: string) => Promise<TokenRecord | undefined>;
/** A stream ticket by hash: looked up once a stream opens and when it is checked again, never cached. */
export type FindTicket = (hash: string) => Promise<TicketRecord | undefined>;

/**
 * Token look-ups, remembered for half a second. Every request needs one, and this keeps them
 * off the store under load, while a token created or revoked anywhere (the CLI, another
 * instance) still takes effect within a second, as docs/reference/tokens.md promises. Unknown hashes are
 * remembered too, and the cache is emptied when full, so guessing cannot grow it without end.
 */
export function cachedTokenLookup({ tokens }: Pick<Store, 'tokens'>, ttlMs = 500, maxEntries = 10_000): FindToken {
  const cache = new Map<string, { record: TokenRecord | undefined; until: number }>();
  // Look-ups under way: when an entry expires under load, the requests that find it expired
  // share one look-up instead of each making its own.
  const inFlight = new Map<string, Promise<TokenRecord | undefined>>();
  return async (hash) => {
    const now = Date.now();
    const hit = cache.get(hash);
    if (hit && hit.until > now) return hit.record;
    let lookup = inFlight.get(hash);
    if (!lookup) {
      lookup = tokens.findByHash(hash).finally(() => inFlight.delete(hash));
      inFlight.set(hash, lookup);
      const record = await lookup;
      if (cache.size >= maxEntries) cache.clear();
      cache.set(hash, { record, until: now + ttlMs });
      return record;
    }
    return lookup;
  };
}

/**
 * The hash of a bearer token, remembered by token: every request of a client sends the same
 * token, and SHA-256 of it was about 2% of a POST's CPU. At most `maxEntries` are kept (emptied
 * when full, so that many tokens, guessed or not, cannot grow it); the hash is only a key for the
 * look-up above and the rate limit, never a decision, so remembering it changes none.
 */
export function rememberedTokenHashes(maxEntries = 10_000, hash = hashToken): (token: string) => string {
  const hashes = new Map<string, string>();
  return (token) => {
    let known = hashes.get(token);
    if (known === undefined) {
      if (hashes.size >= maxEntries) hashes.clear();
      hashes.set(token, (known = hash(token)));
    }
    return known;
  };
}
