import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { hashToken, isActive, isWellFormedToken, parseDuration, type TokenRecord } from '../../src/domain/token.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { tempSqliteStore } from '../support/temp-store.js';

describe('token hashing', () => {
  it('is the SHA-256 hex digest of the whole token', () => {
    const t = 'pst_abc';
    assert.equal(hashToken(t), createHash('sha256').update(t).digest('hex'));
    assert.notEqual(hashToken('pst_abc'), hashToken('pst_abd'));
  });
});

describe('createToken', () => {
  it('stores only the hash, and the token is pst_ + 32 random bytes in base64url', async () => {
    const store = await tempSqliteStore();
    const { token, record } = await createToken(store, { name: 'x' });
    assert.match(token, /^pst_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(token.slice(4), 'base64url').length, 32);
    const stored = await store.tokens.list();
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.hash, hashToken(token));
    assert.ok(!JSON.stringify(stored).includes(token.slice(4)), 'the token itself is not stored');
    assert.equal(record.prefix, token.slice(0, 8));
    assert.deepEqual(record.scopes, ['plants:read', 'plants:write', 'metrics:read']);
    const second = await createToken(store, { name: 'y', scopes: ['plants:read', 'plants:read'] });
    assert.notEqual(second.token, token);
    assert.deepEqual(second.record.scopes, ['plants:read']);
    await store.close();
  });
});

describe('isActive', () => {
  const base: TokenRecord = {
    id: 'a',
    name: 'n',
    hash: 'h',
    prefix: 'pst_',
    scopes: [],
    createdAt: new Date(0),
    expiresAt: null,
    revokedAt: null,
  };
  it('refuses revoked and expired tokens', () => {
    const now = new Date(1000);
    assert.equal(isActive(base, now), true);
    assert.equal(isActive({ ...base, revokedAt: new Date(500) }, now), false);
    assert.equal(isActive({ ...base, expiresAt: new Date(1000) }, now), false);
    assert.equal(isActive({ ...base, expiresAt: new Date(1001) }, now), true);
  });
});

describe('isWellFormedToken', () => {
  it('accepts RFC 6750 b64token characters only', () => {
    assert.equal(isWellFormedToken('pst_abc-_.~+/=='), true);
    assert.equal(isWellFormedToken('a b'), false);
    assert.equal(isWellFormedToken('a"b'), false);
    assert.equal(isWellFormedToken('=abc'), false);
    assert.equal(isWellFormedToken(''), false);
    assert.equal(isWellFormedToken('a'.repeat(513)), false);
  });
});

describe('parseDuration', () => {
  it('reads s, m, h, d and w', () => {
    assert.equal(parseDuration('30d'), 30 * 86_400_000);
    assert.equal(parseDuration('1s'), 1000);
    assert.equal(parseDuration('90m'), 90 * 60_000);
    assert.equal(parseDuration('2w'), 14 * 86_400_000);
    for (const bad of ['', '0d', '10', 'd', '1.5h', '-1d', '1y', ' 1d'])
      assert.equal(parseDuration(bad), undefined, bad);
  });
});
