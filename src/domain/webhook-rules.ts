import { lineProblem, timeProblem, type FieldProblem } from './record-values.js';
import { EVENT_TYPES, type WebhookEndpoint } from './webhook.js';

// The rules every stored webhook endpoint keeps. `addWebhook` checks the endpoint it made against
// them, and a restore checks each endpoint of a backup against them, so both accept the same ones.
// (Whether the URL's host is a public address needs the configuration, and for a name a lookup:
// events/address-guard.ts.)

/** What `webhook add` makes an endpoint's id: `ep_` and 12 random bytes in base64url. */
export const ENDPOINT_ID = /^ep_[A-Za-z0-9_-]{16}$/;
/** The longest subscriber URL, as `webhook add` stores it. */
export const MAX_URL_LENGTH = 2048;
/** An endpoint's secret, as Standard Webhooks libraries expect it: `whsec_` and 32 bytes in base64. */
export const SECRET_PREFIX = 'whsec_';
export const SECRET_BYTES = 32;
/** A secret sealed with WEBHOOK_SECRET_KEY: `aes256gcm:<iv>:<ciphertext>:<tag>`, each in base64. */
export const SEALED_PREFIX = 'aes256gcm:';
const SEALED = new RegExp(`^${SEALED_PREFIX}([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$`);
/** AES-256-GCM's nonce and authentication tag, in bytes. */
export const SEALED_IV_BYTES = 12;
const TAG_BYTES = 16;
/** Why a disabled endpoint was disabled: a line the system writes, shown by `webhook list`. */
const MAX_REASON = 200;

/** Why `text` cannot be a subscriber URL (`must …`, to follow "the URL"), or undefined when its form is acceptable. */
export function urlProblem(text: string): string | undefined {
  const tooLong = `must be at most ${MAX_URL_LENGTH} characters`;
  if (text.length > MAX_URL_LENGTH) return tooLong;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be http:// or https://';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.href.length > MAX_URL_LENGTH) return tooLong;
  return undefined;
}

/** Why these cannot be the events an endpoint receives (`must …`), or undefined. */
export function eventsProblem(events: readonly string[]): string | undefined {
  const unknown = events.find((e) => !(EVENT_TYPES as readonly string[]).includes(e));
  if (events.length === 0 || unknown !== undefined || new Set(events).size !== events.length) {
    return `must name at least one event, each once, among ${EVENT_TYPES.join(', ')}`;
  }
  return undefined;
}

/** The bytes of `text` when it is base64 written as Node writes it (padded, nothing else), else undefined. */
function base64Bytes(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** Whether `secret` is one `webhook add` makes: `whsec_` and 32 bytes in base64. */
export function isEndpointSecret(secret: string): boolean {
  return secret.startsWith(SECRET_PREFIX) && base64Bytes(secret.slice(SECRET_PREFIX.length))?.length === SECRET_BYTES;
}

/** The parts of a sealed secret, or undefined when `stored` is not sealed. */
export function sealedParts(stored: string): { iv: Buffer; data: Buffer; tag: Buffer } | undefined {
  const m = SEALED.exec(stored);
  if (!m) return undefined;
  return { iv: Buffer.from(m[1]!, 'base64'), data: Buffer.from(m[2]!, 'base64'), tag: Buffer.from(m[3]!, 'base64') };
}

/** A stored secret is one `webhook add` makes, as it is, or sealed: an AES-256-GCM box of one. */
function storedSecretProblem(stored: string): string | undefined {
  if (isEndpointSecret(stored)) return undefined;
  const m = SEALED.exec(stored);
  const [iv, data, tag] = m ? m.slice(1).map(base64Bytes) : [];
  const plainLength = SECRET_PREFIX.length + Math.ceil(SECRET_BYTES / 3) * 4;
  if (iv?.length === SEALED_IV_BYTES && tag?.length === TAG_BYTES && data?.length === plainLength) return undefined;
  return `must be whsec_ and ${SECRET_BYTES} bytes in base64, or that sealed with WEBHOOK_SECRET_KEY (aes256gcm:…)`;
}

/** Why `e` is not an endpoint the store may hold, naming the field, or undefined. */
export function endpointProblem(e: WebhookEndpoint): FieldProblem<WebhookEndpoint> | undefined {
  const at = (field: keyof WebhookEndpoint, problem: string | undefined) => (problem ? { field, problem } : undefined);
  return (
    at('id', ENDPOINT_ID.test(e.id) ? undefined : 'must be ep_ and 16 characters, as webhook add makes it') ??
    at('url', storedUrlProblem(e.url)) ??
    at('events', eventsProblem(e.events)) ??
    at('secret', storedSecretProblem(e.secret)) ??
    at('disabledReason', reasonProblem(e)) ??
    at('createdAt', timeProblem(e.createdAt))
  );
}

/** The URL as `webhook add` stores it: acceptable, and written as the URL standard writes it. */
function storedUrlProblem(url: string): string | undefined {
  const problem = urlProblem(url);
  if (problem !== undefined) return problem;
  const href = new URL(url).href;
  return href === url ? undefined : `must be written as webhook add stores it (${href})`;
}

/** An enabled endpoint has no reason to be disabled; a disabled one says why. */
function reasonProblem(e: WebhookEndpoint): string | undefined {
  if (e.enabled) return e.disabledReason === null ? undefined : 'must be null while the endpoint is enabled';
  return e.disabledReason === null
    ? 'must say why the endpoint was disabled'
    : lineProblem(e.disabledReason, MAX_REASON);
}
