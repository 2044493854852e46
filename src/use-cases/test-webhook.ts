import { randomBytes } from 'node:crypto';
import type { WebhookConfig } from '../config/config.js';
import { NotFoundError } from '../domain/errors.js';
import { TEST_EVENT_TYPE, testEventBody, type WebhookEndpoint } from '../domain/webhook.js';
import { send, type SendResult } from '../events/send.js';
import { openSecret, signedHeaders } from '../events/signing.js';
import type { Store } from '../store/store.js';

/** How much of the answer's body `webhook test` shows. */
export const ANSWER_BYTES = 256;

export interface TestAnswer extends SendResult {
  endpoint: Omit<WebhookEndpoint, 'secret'>;
  /** The test event's `webhook-id`: `msg_test_` and 16 random characters. */
  webhookId: string;
  /** From sending to the end of the answer (or the failure). */
  ms: number;
}

/**
 * `webhook test`: sends the endpoint a signed test event (TEST_EVENT_TYPE) now, directly, not
 * through the outbox: signed with its secret, through the same address guard and time-out as
 * every delivery, whatever types it subscribes to and even when it is disabled. Nothing is
 * written: its outcome is neither a delivery nor the endpoint's last failure.
 */
export async function testWebhook(
  { webhooks }: Pick<Store, 'webhooks'>,
  config: Pick<WebhookConfig, 'webhookAllowPrivate' | 'webhookSecretKey' | 'webhookTimeoutMs'>,
  id: string,
): Promise<TestAnswer> {
  const endpoint = await webhooks.findEndpoint(id);
  if (endpoint === undefined) throw new NotFoundError(`no webhook endpoint with id "${id}"`);
  const { secret: stored, ...shown } = endpoint;
  const secret = openSecret(stored, config.webhookSecretKey);
  const webhookId = `msg_test_${randomBytes(12).toString('base64url')}`;
  const started = Date.now();
  const body = testEventBody(id, new Date(started));
  const headers = signedHeaders(secret, webhookId, Math.floor(started / 1000), body, TEST_EVENT_TYPE);
  const answer = await send(endpoint.url, headers, body, {
    timeoutMs: config.webhookTimeoutMs,
    allowPrivate: config.webhookAllowPrivate,
    keepBytes: ANSWER_BYTES,
  });
  return { ...answer, endpoint: shown, webhookId, ms: Date.now() - started };
}
