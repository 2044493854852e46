import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** A new endpoint secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks libraries expect. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
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

const SEALED = /^aes256gcm:([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/;

/**
 * How a secret is kept in the store: encrypted with AES-256-GCM under WEBHOOK_SECRET_KEY when
 * that is set (`aes256gcm:<iv>:<ciphertext>:<tag>`), as is otherwise.
 */
export function sealSecret(secret: string, key: Buffer | undefined): string {
  if (key === undefined) return secret;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `aes256gcm:${iv.toString('base64')}:${data.toString('base64')}:${cipher.getAuthTag().toString('base64')}`;
}

/** The secret back from its stored form; throws when it is sealed and the key is missing or wrong. */
export function openSecret(stored: string, key: Buffer | undefined): string {
  const m = SEALED.exec(stored);
  if (!m) return stored;
  if (key === undefined) throw new Error('the endpoint secret is encrypted and WEBHOOK_SECRET_KEY is not set');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(m[1]!, 'base64'));
    decipher.setAuthTag(Buffer.from(m[3]!, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(m[2]!, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('the endpoint secret cannot be decrypted with WEBHOOK_SECRET_KEY (a different key?)');
  }
}
