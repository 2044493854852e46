import { once } from 'node:events';
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/config.js';
import { HttpError } from '../errors/http-error.js';
import { namedRedisStore } from './rate-limit-keys.js';

export type LimitKind = 'token' | 'auth_failure';

/**
 * The two limits that answer 429, counted by @fastify/rate-limit's stores (in
 * process, or in Redis when instances share limits). They are called from the bearer check,
 * so they sit where the check order puts them: the address limit before a credential is
 * looked at (a blocked address cannot go on guessing), the token limit once it is known.
 */
export interface RateLimits {
  /** Before a presented credential is checked: 429 when this address has had too many refused. */
  checkAddress(request: FastifyRequest): void;
  /** A presented credential was refused: count it against the address; 429 when that was one too many. */
  recordFailure(request: FastifyRequest): Promise<void>;
  /** An authenticated request: count it against its token; 429 past the limit, RateLimit headers otherwise. */
  countToken(request: FastifyRequest, reply: FastifyReply, key: string): Promise<void>;
}

/** A request's key for the per-token limit; set by the bearer check before countToken. */
const TOKEN_KEY = Symbol('rateLimitTokenKey');
type Keyed = FastifyRequest & { [TOKEN_KEY]?: string };

/**
 * A counter's time to live in milliseconds as its store reports it (Redis's PTTL when limits
 * are shared), within the limit's window: a longer, negative (no expiry) or non-numeric value is
 * not one this limiter set, and must not become a longer Retry-After or block.
 */
function ttlWithin(ttlMs: number, windowMs: number): number {
  return Number.isFinite(ttlMs) ? Math.min(Math.max(ttlMs, 0), windowMs) : windowMs;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function tooMany(message: string, limit: number, seconds: number): HttpError {
  const wait = String(seconds);
  return new HttpError(429, `${message}; retry after ${wait} s`, {
    'retry-after': wait,
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': '0',
    'ratelimit-reset': wait,
  });
}

/** Redis for shared limits. Never waits on it: commands fail at once while it is away (limits then fail open). */
async function connectRedis(app: FastifyInstance, url: string): Promise<Redis> {
  // Loaded only when limits are shared: a single instance does not pay for it at start.
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 250,
    connectTimeout: 2_000,
  });
  let lastLog = 0;
  redis.on('error', (err: Error) => {
    if (Date.now() - lastLog < 30_000) return;
    lastLog = Date.now();
    app.log.warn({ err }, 'rate-limit store (Redis) unreachable: limits are not enforced');
  });
  redis.on('ready', () => {
    if (lastLog) app.log.info('rate-limit store (Redis) reachable again');
    lastLog = 0;
  });
  app.addHook('onClose', async () => redis.disconnect());
  try {
    await once(redis, 'ready', { signal: AbortSignal.timeout(2_000) });
  } catch {
    // Logged by the error handler above; the service starts anyway and limits resume with Redis.
  }
  return redis;
}

export async function registerRateLimits(
  app: FastifyInstance,
  config: Config,
  onLimited: (kind: LimitKind) => void = () => {},
): Promise<RateLimits | undefined> {
  const { rateLimitPerWindow: rateLimitPerToken, authFailureLimitPerWindow: authFailureLimit } = config;
  const timeWindow = config.rateLimitWindowSeconds * 1000;
  if (rateLimitPerToken === 0 && authFailureLimit === 0) return undefined;
  await app.register(fastifyRateLimit, {
    global: false,
    skipOnError: true,
    ...(config.redisUrl && { store: namedRedisStore(await connectRedis(app, config.redisUrl)) }),
  });

  const addressKey = (request: FastifyRequest) => `address:${normalizeIP(request.ip)}`;
  const failures =
    authFailureLimit > 0 && app.createRateLimit({ max: authFailureLimit, timeWindow, keyGenerator: addressKey });
  // Addresses past their limit, until their window ends, as this process learnt from the store
  // when counting their last failure. Checked without a round trip, so requests that present a
  // credential pay nothing for this limit until some address fails; bounded like the token cache.
  const blocked = new Map<string, number>();
  const blockedMessage = 'too many refused credentials from this address';
  const perToken =
    rateLimitPerToken > 0 &&
    app.createRateLimit({
      max: rateLimitPerToken,
      timeWindow,
      keyGenerator: (request) => (request as Keyed)[TOKEN_KEY]!,
    });

  return {
    checkAddress(request) {
      if (blocked.size === 0) return;
      const key = addressKey(request);
      const until = blocked.get(key);
      if (until === undefined) return;
      const left = until - Date.now();
      if (left <= 0) {
        blocked.delete(key);
        return;
      }
      onLimited('auth_failure');
      throw tooMany(blockedMessage, authFailureLimit, seconds(left));
    },

    async recordFailure(request) {
      if (!failures) return;
      const state = await failures(request);
      if (state.isAllowed || state.remaining > 0) return;
      if (blocked.size >= 10_000) blocked.clear();
      const left = ttlWithin(state.ttl, timeWindow);
      blocked.set(addressKey(request), Date.now() + left);
      // This failure was one past the limit (counted elsewhere, on another instance, first).
      if (state.isExceeded) {
        onLimited('auth_failure');
        throw tooMany(blockedMessage, state.max, seconds(left));
      }
    },

    async countToken(request, reply, key) {
      if (!perToken) return;
      (request as Keyed)[TOKEN_KEY] = key;
      const state = await perToken(request);
      if (state.isAllowed) return;
      if (state.isExceeded) {
        onLimited('token');
        throw tooMany('too many requests for this token', state.max, seconds(ttlWithin(state.ttl, timeWindow)));
      }
      reply.header('ratelimit-limit', state.max);
      reply.header('ratelimit-remaining', state.remaining);
      reply.header('ratelimit-reset', seconds(ttlWithin(state.ttl, timeWindow)));
    },
  };
}
