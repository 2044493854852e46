import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../src/config/config.js';
import { checkSubscriberUrl, isPrivateAddress } from '../../src/events/address-guard.js';
import { retryDelay } from '../../src/events/outcome.js';
import { parseRetryAfter } from '../../src/events/retry-after.js';
import { newSecret, openSecret, sealSecret, sign } from '../../src/events/signing.js';
import { newEvent } from '../../src/domain/webhook.js';

describe('webhook building blocks', () => {
  it('signs as Standard Webhooks verifiers expect', () => {
    const secret = newSecret();
    const ev = newEvent('plant.created', { id: 9223372036854775807n, name: 'a', tag: '' });
    assert.equal(ev.body, '{"id":9223372036854775807,"name":"a","tag":""}');
    const ts = Math.floor(Date.now() / 1000);
    const id = 'msg_1795000000000001';
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': sign(secret, id, ts, ev.body),
    };
    assert.ok(new Webhook(secret).verify(ev.body, headers));
    assert.throws(() => new Webhook(newSecret()).verify(ev.body, headers));
  });

  it('seals secrets at rest with WEBHOOK_SECRET_KEY (AES-256-GCM) and opens them only with that key', () => {
    const key = Buffer.alloc(32, 7);
    const secret = newSecret();
    const sealed = sealSecret(secret, key);
    assert.match(sealed, /^aes256gcm:/);
    assert.ok(!sealed.includes(secret.slice(6)));
    assert.notEqual(sealSecret(secret, key), sealed, 'a fresh IV each time');
    assert.equal(openSecret(sealed, key), secret);
    assert.throws(() => openSecret(sealed, Buffer.alloc(32, 8)), /cannot be decrypted/);
    assert.throws(() => openSecret(sealed, undefined), /WEBHOOK_SECRET_KEY is not set/);
    assert.equal(sealSecret(secret, undefined), secret);
    assert.equal(openSecret(secret, key), secret);
  });

  it('backs off exponentially with jitter, capped, and honours Retry-After', () => {
    const c = { ...loadConfig({}), webhookBackoffBaseMs: 1000, webhookBackoffMaxMs: 60_000 };
    assert.equal(
      retryDelay(1, c, null, () => 0.5),
      1000,
    );
    assert.equal(
      retryDelay(3, c, null, () => 1),
      4000,
    );
    assert.equal(
      retryDelay(3, c, null, () => 0),
      1000,
    );
    assert.equal(
      retryDelay(30, c, null, () => 1),
      60_000,
    );
    assert.equal(
      retryDelay(1, c, 30_000, () => 0),
      30_000,
    );
    assert.equal(parseRetryAfter('120'), 120_000);
    assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 5_000), 5_000);
    assert.equal(parseRetryAfter('soon'), null);
  });

  it('knows private addresses', async () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
    ])
      assert.ok(isPrivateAddress(a), a);
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8'])
      assert.ok(!isPrivateAddress(a), a);
    assert.match((await checkSubscriberUrl('http://localhost:8080/x', false))!, /not a public address \(loopback\)/);
    assert.equal(await checkSubscriberUrl('http://localhost:8080/x', true), undefined);
    assert.match((await checkSubscriberUrl('file:///etc/passwd', true))!, /http/);
    assert.match((await checkSubscriberUrl('http://u:p@127.0.0.1/', true))!, /password/);
  });
});
