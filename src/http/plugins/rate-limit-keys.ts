import { createRequire } from 'node:module';
import type { FastifyRateLimitOptions, FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

/**
 * Every Redis key of the limits starts with this, then says what it counts:
 * `plant-store:rate-limit:token:<sha256 of the token>`, `…:jwt:<sub>`, `…:address:<client address>`.
 */
export const RATE_LIMIT_KEY_PREFIX = 'plant-store:rate-limit:';

type IncrArgs = Parameters<FastifyRateLimitStore['incr']>;
type Backoff = { continueExceeding?: boolean; exponentialBackoff?: boolean };
type RedisStoreCtor = new (
  continueExceeding: Backoff['continueExceeding'],
  exponentialBackoff: Backoff['exponentialBackoff'],
  redis: Redis,
  key: string,
) => Pick<FastifyRateLimitStore, 'incr'>;

// @fastify/rate-limit's own Redis store (its script counts and expires a key in one step). Its
// package exports no name for it; the file is its `store` option's default.
const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as RedisStoreCtor;

/**
 * The Redis store under keys an operator can read. The plugin's own gives each limiter made with
 * createRateLimit a key part for its route's method and URL, which such a limiter has not
 * (`plant-store-rate-limit:undefinedundefined-token:…`); each limiter's keys here are what its key
 * generator names, after the prefix.
 */
export function namedRedisStore(redis: Redis): FastifyRateLimitStoreCtor {
  return class NamedRedisStore implements FastifyRateLimitStore {
    private readonly counts: Pick<FastifyRateLimitStore, 'incr'>;

    constructor(options: FastifyRateLimitOptions) {
      // Options the plugin has and its types do not declare (each false unless set: these limits set neither).
      const { continueExceeding, exponentialBackoff } = options as Backoff;
      this.counts = new RedisStore(continueExceeding, exponentialBackoff, redis, RATE_LIMIT_KEY_PREFIX);
    }

    incr(...args: IncrArgs): void {
      this.counts.incr(...args);
    }

    child(options: FastifyRateLimitOptions): FastifyRateLimitStore {
      return new NamedRedisStore(options);
    }
  };
}
