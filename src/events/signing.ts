import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { SEALED_IV_BYTES, SEALED_PREFIX, sealedParts, SECRET_BYTES, SECRET_PREFIX } from '../domain/webhook-rules.js';

/** A new endpoint secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks libraries expect. */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/**
 * The Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256, keyed with the secret's
 * decoded bytes, of `<webhook-id>.<webhook-timestamp>.<body>`.
 */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * The headers of one delivery attempt, or of a test event: Standard Webhooks' three (the
 * signature over this `id`, `timestampSeconds` and `body`) and the event's type.
 */
export function signedHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
  type: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'plant-store-webhooks',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': sign(secret, id, timestampSeconds, body),
    'webhook-event-type': type,
  };
}

/**
 * How a secret is kept in the store: encrypted with AES-256-GCM under WEBHOOK_SECRET_KEY when
 * that is set (`aes256gcm:<iv>:<ciphertext>:<tag>`), as is otherwise.
 */
export function sealSecret(secret: string, key: Buffer | undefined): string {
  if (key === undefined) return secret;
  const iv = randomBytes(SEALED_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${SEALED_PREFIX}${iv.toString('base64')}:${data.toString('base64')}:${cipher.getAuthTag().toString('base64')}`;
}

/** The secret back from its stored form; throws when it is sealed and the key is missing or wrong. */
export function openSecret(stored: string, key: Buffer | undefined): string {
  const sealed = sealedParts(stored);
  if (!sealed) return stored;
  if (key === undefined) throw new Error('the endpoint secret is encrypted and WEBHOOK_SECRET_KEY is not set');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.data), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('the endpoint secret cannot be decrypted with WEBHOOK_SECRET_KEY (a different key?)');
  }
}
