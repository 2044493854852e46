import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Outbox } from '../store/webhooks.js';

export interface WebhookMetrics {
  /** One attempt's outcome, and how long after its event it happened (seconds). */
  attempt(outcome: 'delivered' | 'retry' | 'failed', lagSeconds: number): void;
}

export function createWebhookMetrics(registry: Registry, outbox: Outbox): WebhookMetrics {
  const attempts = new Counter({
    name: 'plant_store_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome: delivered (2xx), retry (failed, will retry), failed (given up).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'plant_store_webhook_delivery_lag_seconds',
    help: 'Time from an event to its successful delivery.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
    registers: [registry],
  });
  new Gauge({
    name: 'plant_store_webhook_pending_deliveries',
    help: 'Webhook deliveries not yet delivered nor given up.',
    registers: [registry],
    async collect() {
      this.set(await outbox.countPendingDeliveries().catch(() => NaN));
    },
  });
  return {
    attempt(outcome, lagSeconds) {
      attempts.inc({ outcome });
      if (outcome === 'delivered') lag.observe(Math.max(0, lagSeconds));
    },
  };
}
