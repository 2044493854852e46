import { randomBytes } from 'node:crypto';
import type { WebhookConfig } from '../config/config.js';
import { InvalidInputError, NotFoundError } from '../domain/errors.js';
import type { EventType, WebhookEndpoint } from '../domain/webhook.js';
import { endpointProblem } from '../domain/webhook-rules.js';
import { checkSubscriberUrl } from '../events/address-guard.js';
import { newSecret, sealSecret } from '../events/signing.js';
import type { Store } from '../store/store.js';

/**
 * Subscribes a URL to some event types. The URL must be http(s), carry no credentials and, unless
 * private addresses are allowed, resolve only to public ones; the endpoint must keep the rules of
 * every stored one. The secret is returned once, here;
 * the store keeps it sealed when a key is configured.
 */
export async function addWebhook(
  { webhooks }: Pick<Store, 'webhooks'>,
  config: Pick<WebhookConfig, 'webhookAllowPrivate' | 'webhookSecretKey'>,
  url: string,
  events: EventType[],
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const problem = await checkSubscriberUrl(url, config.webhookAllowPrivate);
  if (problem !== undefined) throw new InvalidInputError(problem);
  const secret = newSecret();
  const endpoint: WebhookEndpoint = {
    id: `ep_${randomBytes(12).toString('base64url')}`,
    url: new URL(url).href,
    events,
    secret: sealSecret(secret, config.webhookSecretKey),
    enabled: true,
    disabledReason: null,
    createdAt: new Date(),
  };
  // The rules of every stored endpoint (domain/webhook-rules.ts), which a restore applies too.
  const invalid = endpointProblem(endpoint);
  if (invalid !== undefined) throw new InvalidInputError(`a webhook's "${invalid.field}" ${invalid.problem}`);
  await webhooks.insertEndpoint(endpoint);
  return { endpoint, secret };
}

/** Unsubscribes an endpoint; its undelivered events go with it. */
export async function removeWebhook({ webhooks }: Pick<Store, 'webhooks'>, id: string): Promise<void> {
  if (!(await webhooks.removeEndpoint(id))) throw new NotFoundError(`no webhook endpoint with id "${id}"`);
}
