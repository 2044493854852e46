import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { WebhookConfig } from '../config/config.js';
import type { AttemptResult, DueDelivery } from '../domain/webhook.js';
import type { Outbox } from '../store/webhooks.js';
import type { Tracing } from '../tracing/tracing.js';
import { fairShares } from './fair-share.js';
import type { WebhookMetrics } from './metrics.js';
import { decideAttempt, windowEnd } from './outcome.js';
import { send, type SendResult } from './send.js';
import { openSecret, signedHeaders } from './signing.js';

/** A claim outlives the longest attempt by this much, so a crashed instance's claims expire soon after. */
const LEASE_MARGIN_MS = 5_000;
/**
 * Nudges within this window share one look for due deliveries. Under a write load every request
 * nudges; without this, each commit cycle would carry a claim through the store as well.
 */
const NUDGE_COALESCE_MS = 25;

/** What a delivery claimed past its window gets instead of an attempt. */
const windowOver: SendResult = {
  status: null,
  error: 'its retry window ended before it could be sent again',
  retryAfterMs: null,
};

/** A failed record is tried again after these waits, while the lease lasts (a store's passing error). */
const RECORD_RETRIES_MS = [200, 1_000];

/**
 * Delivers the outbox: claims due deliveries (a lease, so several instances never send the
 * same one at once), each endpoint up to its fair share of the slots (fair-share.ts), POSTs
 * each, and records the outcome. One per server process; the API's write path only inserts
 * outbox rows and never waits on it.
 */
export class Dispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private inFlight = new Set<Promise<void>>();
  /** Attempts in flight, by endpoint. */
  private readonly perEndpoint = new Map<string, number>();
  private ticking = false;
  private again = false;
  private nudged = false;
  /** Aborts the attempts in flight at shutdown: they are recorded as failed and retried later. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly outbox: Outbox,
    private readonly config: WebhookConfig,
    private readonly log: Logger,
    private readonly metrics: WebhookMetrics,
    /** Traces, when on: each delivery attempt is a span, in the trace of the request that made its change. */
    private readonly tracing?: Pick<Tracing, 'delivery'>,
  ) {
    // Each attempt in flight listens for the shutdown.
    setMaxListeners(config.webhookConcurrency + 10, this.stopping.signal);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Something was written here: look for due deliveries now rather than at the next poll. */
  nudge(): void {
    if (!this.running || this.nudged) return;
    this.nudged = true;
    // A tick under way reschedules itself and sees the flag.
    if (!this.ticking) this.schedule(NUDGE_COALESCE_MS);
  }

  /**
   * Stops claiming, cuts the attempts in flight short (a subscriber that hangs must not hold up
   * a shutdown) and waits for their outcomes to be recorded: they are retried, here or elsewhere.
   */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.stopping.abort(new Error('the server is shutting down'));
    await Promise.allSettled([...this.inFlight]);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    this.nudged = false;
    let claimed = 0;
    try {
      if (this.inFlight.size < this.config.webhookConcurrency) {
        const now = Date.now();
        const { enabled, due } = await this.outbox.endpointsDue(now);
        const limits = fairShares(this.config.webhookConcurrency, this.perEndpoint, due, enabled);
        const leaseUntil = now + this.config.webhookTimeoutMs + LEASE_MARGIN_MS;
        const batch = await this.outbox.claimDeliveries(now, leaseUntil, limits);
        claimed = batch.length;
        for (const d of batch) this.launch(d, leaseUntil);
      }
    } catch (err) {
      this.log.warn({ err }, 'webhook dispatcher could not claim deliveries');
    } finally {
      this.ticking = false;
    }
    if (!this.running) return;
    const more = this.again || (claimed > 0 && this.inFlight.size < this.config.webhookConcurrency);
    this.again = false;
    this.schedule(more ? 0 : this.nudged ? NUDGE_COALESCE_MS : this.config.webhookPollIntervalMs);
  }

  private launch(d: DueDelivery, leaseUntil: number): void {
    this.perEndpoint.set(d.endpointId, (this.perEndpoint.get(d.endpointId) ?? 0) + 1);
    const p = this.attempt(d, leaseUntil).finally(() => {
      this.inFlight.delete(p);
      const left = this.perEndpoint.get(d.endpointId)! - 1;
      if (left > 0) this.perEndpoint.set(d.endpointId, left);
      else this.perEndpoint.delete(d.endpointId);
      // A finished attempt frees a slot, and may unblock the next event of its plant.
      this.nudge();
    });
    this.inFlight.add(p);
  }

  private async attempt(d: DueDelivery, leaseUntil: number): Promise<void> {
    const started = Date.now();
    // Claimed again after its window, when an attempt could not be recorded: given up unsent.
    const late = started > windowEnd(d, this.config);
    const r = late ? windowOver : await this.send(d, started);
    const at = Date.now();
    const decided = decideAttempt(d, r, at, this.config);
    // Nothing was sent: the endpoint's last failure stays what its last attempt met.
    const result = late ? { ...decided, reason: null } : decided;
    const { outcome, error } = result;
    this.metrics.attempt(d.endpointId, outcome, (at - d.eventCreatedAt) / 1000);
    const entry = {
      webhookId: d.eventId,
      type: d.type,
      endpoint: d.endpointId,
      attempt: d.attempts + 1,
      status: r.status,
      ms: at - started,
      outcome,
      ...(error !== null && { error }),
      ...(outcome === 'retry' && { retryInMs: result.nextAttemptAt - at }),
    };
    if (outcome === 'delivered') this.log.info(entry, 'webhook delivered');
    else if (result.disableEndpoint !== null) this.log.warn(entry, 'webhook endpoint answered 410 Gone: disabled');
    else this.log.warn(entry, outcome === 'failed' ? 'webhook delivery given up' : 'webhook attempt failed');
    await this.record(result, d, leaseUntil);
  }

  private async send(d: DueDelivery, started: number): Promise<SendResult> {
    // With traces on: a span of the attempt, in the trace of the request that made the change when
    // this process knows it, and its traceparent on the request so that the receiver can go on.
    const span = this.tracing?.delivery(d);
    const r = await this.signedSend(d, started, span?.headers);
    span?.end(r);
    return r;
  }

  private async signedSend(
    d: DueDelivery,
    started: number,
    traceHeaders?: Record<string, string>,
  ): Promise<SendResult> {
    const timestamp = Math.floor(started / 1000);
    try {
      const secret = openSecret(d.secret, this.config.webhookSecretKey);
      const headers = signedHeaders(secret, d.eventId, timestamp, d.body, d.type);
      return await send(d.url, traceHeaders ? { ...headers, ...traceHeaders } : headers, d.body, {
        timeoutMs: this.config.webhookTimeoutMs,
        allowPrivate: this.config.webhookAllowPrivate,
        signal: this.stopping.signal,
      });
    } catch (err) {
      // Nothing was sent (no usable secret): retried, so fixing WEBHOOK_SECRET_KEY recovers.
      return { status: null, error: err instanceof Error ? err.message : String(err), retryAfterMs: null };
    }
  }

  /**
   * Records an outcome, trying again while the lease lasts. When it cannot, the lease runs out
   * and the delivery is claimed again (at-least-once), but never attempted past its window.
   */
  private async record(result: AttemptResult, d: DueDelivery, leaseUntil: number): Promise<void> {
    for (const wait of [...RECORD_RETRIES_MS, undefined]) {
      try {
        await this.outbox.recordAttempt(result);
        return;
      } catch (err) {
        if (wait === undefined || !this.running || Date.now() + wait >= leaseUntil) {
          this.log.error({ err, webhookId: d.eventId }, 'could not record a webhook attempt');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
