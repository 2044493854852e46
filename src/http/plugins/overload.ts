import { routeOf } from '../route-of.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.js';
import type { Store } from '../../store/store.js';
import { HttpError } from '../errors/http-error.js';

/** Routes that answer even under overload: probes must tell "busy" from "dead", operators must see why. */
const EXEMPT = new Set(['/healthz', '/readyz', '/metrics']);

/** The event loop's delay is the mean over this long, sampled this often. */
const SAMPLE_MS = 1000;

/**
 * Overload protection (503): when the event loop falls behind (mean delay over the last second
 * past MAX_EVENT_LOOP_DELAY_MS) or the store does (more than MAX_WRITE_BACKLOG writes waiting for a
 * commit), new requests get 503 with Retry-After at once instead of queueing without end. The check
 * runs after routing, before the credential.
 *
 * Written here rather than with @fastify/under-pressure: its sampling timer also reads the
 * resident memory (process.memoryUsage, which opens /proc/self/stat), and with every descriptor
 * taken by a flood of connections that threw EMFILE out of a timer and ended the process. This
 * guard takes nothing from the operating system that can run out: the delay comes from
 * perf_hooks' histogram and the backlog from the store's own counters.
 */
export async function registerOverloadGuard(
  app: FastifyInstance,
  config: Config,
  store: Store,
  onRefused: (reason: string) => void = () => {},
): Promise<void> {
  const { maxEventLoopDelayMs, maxWriteBacklog } = config;
  const backlog = maxWriteBacklog > 0 ? store.pendingWrites.bind(store) : undefined;
  const delay = maxEventLoopDelayMs > 0 ? meanEventLoopDelay() : undefined;
  if (!delay && !backlog) return;
  app.addHook('onReady', async () => delay?.judgeFromNow());
  app.addHook('onClose', async () => delay?.stop());
  // Synchronous (it calls done), as the request log's hooks are: every request runs it.
  app.addHook('onRequest', (request, _reply, done) => {
    if (EXEMPT.has(routeOf(request).config.route ?? '')) return done();
    if (backlog && backlog() > maxWriteBacklog) refuse('write_backlog', 'the store is behind on writes');
    if (delay && delay.ms() > maxEventLoopDelayMs) refuse('event_loop_delay', 'the server is overloaded');
    done();
  });

  function refuse(reason: string, why: string): never {
    onRefused(reason);
    // Thrown from a hook, it reaches the error handler: 503 with the seed's Error body.
    throw new HttpError(503, `${why}; retry later`, { 'retry-after': '1' });
  }
}

/**
 * The event loop's mean delay over the last sample, in ms. A loop held for seconds shows in the
 * histogram as one late tick among many prompt ones, and that tick may be recorded only after the
 * sample is taken: the sample's own lateness counts too. Until two samples after ready it is 0:
 * start-up's work (compiling the contract's schemas, opening the store) can hold the loop for
 * seconds on a busy machine, and that is not load.
 */
function meanEventLoopDelay() {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let judgeFrom = Infinity;
  let due = Date.now() + SAMPLE_MS;
  let mean = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    // A sample with no tick recorded (NaN): nothing was late enough to record.
    mean = Math.max((histogram.mean || 0) / 1e6 - 10, now - due, 0);
    histogram.reset();
    due = now + SAMPLE_MS;
  }, SAMPLE_MS);
  timer.unref();
  return {
    ms: () => (Date.now() < judgeFrom ? 0 : mean),
    judgeFromNow: () => void (judgeFrom = Date.now() + 2 * SAMPLE_MS),
    stop: () => {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
