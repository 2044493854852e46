import { once } from 'node:events';
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { HttpError } from './http-error.js';

export type LimitKind = 'token' | 'auth_failure';

/**
 * The two limits of PRODUCT.md §3's 429 row, counted by @fastify/rate-limit's stores (in
 * process, or in Redis when instances share limits). They are called from the bearer check,
 * so they sit where the check order puts them: the address limit before a credential is
 * looked at (a blocked address cannot go on guessing), the token limit once it is known.
 */
export interface RateLimits {
  /** Before a presented credential is checked: 429 when this address has had too many refused. */
  checkAddress(request: FastifyRequest): Promise<void>;
  /** A presented credential was refused: count it against the address. */
  recordFailure(request: FastifyRequest): Promise<void>;
  /** An authenticated request: count it against its token; 429 past the limit, RateLimit headers otherwise. */
  countToken(request: FastifyRequest, reply: FastifyReply, key: string): Promise<void>;
}

/** A request's key for the per-token limit; set by the bearer check before countToken. */
const TOKEN_KEY = Symbol('rateLimitTokenKey');
type Keyed = FastifyRequest & { [TOKEN_KEY]?: string };

function tooMany(message: string, limit: number, ttlInSeconds: number): HttpError {
  const wait = String(Math.max(1, ttlInSeconds));
  return new HttpError(429, `${message}; retry after ${wait} s`, {
    'retry-after': wait,
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': '0',
    'ratelimit-reset': wait,
  });
}

/** Redis for shared limits. Never waits on it: commands fail at once while it is away (limits then fail open). */
async function connectRedis(app: FastifyInstance, url: string): Promise<Redis> {
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
    app.log.warn({ err: { message: err.message } }, 'rate-limit store (Redis) unreachable: limits are not enforced');
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
  const { rateLimitPerToken, authFailureLimit, rateLimitWindowMs: timeWindow } = config;
  if (rateLimitPerToken === 0 && authFailureLimit === 0) return undefined;
  await app.register(fastifyRateLimit, {
    global: false,
    skipOnError: true,
    nameSpace: 'plant-store-rate-limit:',
    ...(config.redisUrl && { redis: await connectRedis(app, config.redisUrl) }),
  });

  const failures =
    authFailureLimit > 0 &&
    app.createRateLimit({
      max: authFailureLimit,
      timeWindow,
      keyGenerator: (request) => `address:${normalizeIP(request.ip)}`,
    });
  const perToken =
    rateLimitPerToken > 0 &&
    app.createRateLimit({
      max: rateLimitPerToken,
      timeWindow,
      keyGenerator: (request) => `token:${(request as Keyed)[TOKEN_KEY]}`,
    });

  return {
    async checkAddress(request) {
      if (!failures) return;
      const state = await failures(request, { increment: false });
      if (state.isAllowed || state.remaining > 0 || state.ttl <= 0) return;
      onLimited('auth_failure');
      throw tooMany('too many refused credentials from this address', state.max, state.ttlInSeconds);
    },

    async recordFailure(request) {
      if (failures) await failures(request);
    },

    async countToken(request, reply, key) {
      if (!perToken) return;
      (request as Keyed)[TOKEN_KEY] = key;
      const state = await perToken(request);
      if (state.isAllowed) return;
      if (state.isExceeded) {
        onLimited('token');
        throw tooMany('too many requests for this token', state.max, state.ttlInSeconds);
      }
      reply.header('ratelimit-limit', state.max);
      reply.header('ratelimit-remaining', state.remaining);
      reply.header('ratelimit-reset', Math.max(1, state.ttlInSeconds));
    },
  };
}
