import type { WebhookConfig } from '../config/config.js';
import type { AttemptResult, DueDelivery } from '../domain/webhook.js';
import { failureReason } from './failure-reason.js';
import type { SendResult } from './send.js';

/** The longest error text kept for `webhook list` (a TLS error can quote a whole certificate's names). */
const MAX_ERROR_LENGTH = 500;

/**
 * Exponential backoff with full jitter: after the n-th failed attempt, a delay drawn between the
 * base and min(max, base * 2^(n-1)). A Retry-After asks for at least its delay.
 */
export function retryDelay(
  attempts: number,
  config: WebhookConfig,
  retryAfterMs: number | null,
  random = Math.random,
): number {
  const base = config.webhookBackoffBaseMs;
  const ceiling = Math.min(config.webhookBackoffMaxMs, base * 2 ** Math.min(attempts - 1, 40));
  const jittered = base + random() * Math.max(0, ceiling - base);
  return Math.ceil(Math.max(jittered, retryAfterMs ?? 0));
}

/**
 * When a delivery's retry window ends: no attempt of it starts after this. It starts at its event,
 * or when `webhook redeliver` sent it again.
 */
export const windowEnd = (d: DueDelivery, config: WebhookConfig) => d.windowFrom + config.webhookRetryWindowMs;

/**
 * Text that came from a peer (an error message can quote a certificate or an address), as the
 * stores can keep it: no control characters (PostgreSQL refuses NUL in text), bounded.
 */
export function storableError(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return clean.length > MAX_ERROR_LENGTH ? `${clean.slice(0, MAX_ERROR_LENGTH - 1)}…` : clean;
}

/**
 * What one attempt decided, every time in it a whole number of milliseconds the stores can hold:
 * delivered on 2xx; the endpoint disabled on 410; otherwise retried at the backoff's delay (or a
 * Retry-After's, when longer), unless that falls past the retry window: then given up now, since
 * no attempt may start past it (a Retry-After past the window cannot be honoured within it).
 */
export function decideAttempt(
  d: DueDelivery,
  r: SendResult,
  at: number,
  config: WebhookConfig,
  random = Math.random,
): AttemptResult {
  const base = { eventSeq: d.eventSeq, endpointId: d.endpointId, at, status: r.status };
  if (r.status !== null && r.status >= 200 && r.status < 300) {
    return { ...base, error: null, reason: null, outcome: 'delivered', nextAttemptAt: at, disableEndpoint: null };
  }
  const error = storableError(r.error ?? `HTTP ${r.status}`);
  const reason = storableError(failureReason(r));
  if (r.status === 410) {
    return {
      ...base,
      error,
      reason,
      outcome: 'failed',
      nextAttemptAt: at,
      disableEndpoint: 'the endpoint answered 410 Gone',
    };
  }
  const end = windowEnd(d, config);
  const failed = (why: string) => ({
    ...base,
    error: why,
    reason,
    outcome: 'failed' as const,
    nextAttemptAt: at,
    disableEndpoint: null,
  });
  if (r.retryAfterMs !== null && at + r.retryAfterMs > end) {
    return failed(storableError(`${error}: its Retry-After reaches past the retry window`));
  }
  const next = at + retryDelay(d.attempts + 1, config, r.retryAfterMs, random);
  if (next > end) return failed(error);
  return { ...base, error, reason, outcome: 'retry', nextAttemptAt: next, disableEndpoint: null };
}
