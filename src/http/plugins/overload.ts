import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.js';
import type { Store } from '../../store/store.js';
import { HttpError } from '../http-error.js';

/** Routes that answer even under overload: probes must tell "busy" from "dead", operators must see why. */
const EXEMPT = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Overload protection (503): when the event loop falls behind (mean delay over
 * the last second past MAX_EVENT_LOOP_DELAY_MS) or the store does (more than MAX_WRITE_BACKLOG
 * writes waiting for a commit), new requests get 503 with Retry-After at once instead of
 * queueing without end. The check runs after routing, before the credential.
 */
export async function registerOverloadGuard(
  app: FastifyInstance,
  config: Config,
  store: Store,
  onRefused: (reason: string) => void = () => {},
): Promise<void> {
  const { maxEventLoopDelayMs, maxWriteBacklog } = config;
  const backlog = maxWriteBacklog > 0 && store.pendingWrites?.bind(store);
  if (maxEventLoopDelayMs === 0 && !backlog) return;
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    sampleInterval: 1000,
    ...(backlog && {
      healthCheck: async () => backlog() <= maxWriteBacklog,
      healthCheckInterval: 100,
    }),
    // A rejected promise reaches the error handler: 503 with the seed's Error body.
    pressureHandler: async (request: FastifyRequest, _reply, type) => {
      if (EXEMPT.has(request.routeOptions.config.route ?? '')) return;
      const backlogged = type === underPressure.TYPE_HEALTH_CHECK;
      onRefused(backlogged ? 'write_backlog' : 'event_loop_delay');
      const why = backlogged ? 'the store is behind on writes' : 'the server is overloaded';
      throw new HttpError(503, `${why}; retry later`, { 'retry-after': '1' });
    },
  });
}
