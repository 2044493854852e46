import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Outbox } from '../store/webhooks.js';

export interface WebhookMetrics {
  /** One attempt to `endpoint`: its outcome, and how long after its event it happened (seconds). */
  attempt(endpoint: string, outcome: 'delivered' | 'retry' | 'failed', lagSeconds: number): void;
}

/**
 * The delivery metrics, each by endpoint id: an operator sees which subscriber fails. Endpoints
 * are few (each is added by hand with `webhook add`), so the label keeps the series bounded: per
 * endpoint, 3 of attempts, 17 of the lag's histogram and 1 of the pending gauge. The gauge
 * lists the endpoints the store has when scraped; the counters keep a removed endpoint's series
 * until the process restarts.
 */
export function createWebhookMetrics(registry: Registry, outbox: Outbox): WebhookMetrics {
  const attempts = new Counter({
    name: 'plant_store_webhook_attempts_total',
    help: 'Webhook delivery attempts, by endpoint id and outcome: delivered (2xx), retry (failed, will retry), failed (given up).',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'plant_store_webhook_delivery_lag_seconds',
    help: 'Time from an event to its successful delivery, by endpoint id.',
    labelNames: ['endpoint'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
    registers: [registry],
  });
  new Gauge({
    name: 'plant_store_webhook_pending_deliveries',
    help: 'Webhook deliveries not yet delivered nor given up, by endpoint id (counted when scraped).',
    labelNames: ['endpoint'] as const,
    registers: [registry],
    async collect() {
      const pending = await outbox.pendingByEndpoint().catch(() => undefined);
      // Only the endpoints there are now: a removed one's series goes.
      this.reset();
      for (const [endpoint, n] of pending ?? []) this.set({ endpoint }, n);
    },
  });
  return {
    attempt(endpoint, outcome, lagSeconds) {
      attempts.inc({ endpoint, outcome });
      if (outcome === 'delivered') lag.observe({ endpoint }, Math.max(0, lagSeconds));
    },
  };
}
