import type { WebhookEndpoint } from '../../src/domain/webhook.js';

/**
 * A webhook endpoint of `id`, subscribed to creations, written straight into a store: its URL
 * (the discard port) receives nothing, for tests of what the store keeps, not of deliveries.
 */
export const storedEndpoint = (id: string): WebhookEndpoint => ({
  id,
  url: 'http://127.0.0.1:9/hook',
  events: ['plant.created'],
  secret: 'whsec_AAAA',
  enabled: true,
  disabledReason: null,
  createdAt: new Date(),
});
