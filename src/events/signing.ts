import { createHmac, randomBytes } from 'node:crypto';

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
