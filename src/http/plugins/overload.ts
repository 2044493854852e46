import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.js';
import type { Store } from '../../store/store.js';
import { HttpError } from '../http-error.js';

/** Routes that answer even under overload: probes must tell "busy" from "dead", operators must see why. */
const EXEMPT = new Set(['/healthz', '/readyz', '/metrics']);

/** The event loop's delay is the mean over this long, sampled this often. */
const SAMPLE_MS = 1000;

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
  // The delay is sampled from registration on, so the first samples cover start-up's own
  // synchronous work (compiling the contract's schemas, opening the store): on a busy machine a
  // start that took seconds read as seconds of delay, and the first requests got 503. The delay
  // is judged from the first sample taken wholly after ready: at most two intervals later.
  let judgeDelayFrom = Infinity;
  app.addHook('onReady', async () => {
    judgeDelayFrom = Date.now() + 2 * SAMPLE_MS;
  });
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    sampleInterval: SAMPLE_MS,
    ...(backlog && {
      healthCheck: async () => backlog() <= maxWriteBacklog,
      healthCheckInterval: 100,
    }),
    // A rejected promise reaches the error handler: 503 with the seed's Error body.
    pressureHandler: async (request: FastifyRequest, _reply, type) => {
      if (EXEMPT.has(request.routeOptions.config.route ?? '')) return;
      // A delay not judged yet is let through; the backlog, checked after it, still is.
      const early = type === underPressure.TYPE_EVENT_LOOP_DELAY && Date.now() < judgeDelayFrom;
      if (early && !(backlog && backlog() > maxWriteBacklog)) return;
      const backlogged = early || type === underPressure.TYPE_HEALTH_CHECK;
      onRefused(backlogged ? 'write_backlog' : 'event_loop_delay');
      const why = backlogged ? 'the store is behind on writes' : 'the server is overloaded';
      throw new HttpError(503, `${why}; retry later`, { 'retry-after': '1' });
    },
  });
}
