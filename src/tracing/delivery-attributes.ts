// What a webhook delivery's span says, by the HTTP client semantic conventions.
import type { Attributes, Span } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import { redactUrl } from '../log.js';
import type { DeliveryAttempt } from './tracing.js';

/**
 * The endpoint's URL as a trace may show it: a password in it, and a credential in its path or
 * query (as the log redacts them: log.ts), never leave the process.
 */
function shownUrl(url: URL): string {
  const userinfo = url.username || url.password ? 'REDACTED:REDACTED@' : '';
  return `${url.protocol}//${userinfo}${url.host}${redactUrl(`${url.pathname}${url.search}`)}`;
}

export function deliveryAttributes(attempt: DeliveryAttempt): Attributes {
  const url = new URL(attempt.url);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return {
    [ATTR_HTTP_REQUEST_METHOD]: 'POST',
    [ATTR_URL_FULL]: shownUrl(url),
    [ATTR_SERVER_ADDRESS]: url.hostname,
    [ATTR_SERVER_PORT]: port,
    ...(attempt.attempts > 0 && { [ATTR_HTTP_REQUEST_RESEND_COUNT]: attempt.attempts }),
    'plant_store.webhook.endpoint': attempt.endpointId,
    'plant_store.webhook.id': attempt.eventId,
  };
}

/**
 * Sets what the attempt met on its span; the reason it failed (an error, or a status other than
 * 2xx), if it did.
 */
export function deliveryResult(span: Span, r: { status: number | null; error: string | null }): string | undefined {
  if (r.status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, r.status);
  if (r.status !== null && r.status >= 200 && r.status < 300) return undefined;
  // An error's code (ECONNREFUSED, ETIMEDOUT) when it has one, or the status, as the conventions ask.
  const code = r.error?.match(/^([A-Z][A-Z_]+):/)?.[1];
  span.setAttribute(ATTR_ERROR_TYPE, code ?? (r.status !== null ? String(r.status) : '_OTHER'));
  return r.error ?? `HTTP ${r.status}`;
}
