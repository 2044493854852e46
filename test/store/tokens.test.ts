// The tokens' contract, the same cases on both stores: what goes in comes back as it was (scopes,
// times to the millisecond, no expiry, an empty prefix), found by its hash; listed oldest first;
// counted; revoked once, the first time kept; a second token with the same hash refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenRecord } from '../../src/domain/token.js';
import { stores, suiteOptions } from '../support/stores.js';
import { suiteStore } from '../support/suite-store.js';

const token = (id: string, fields: Partial<TokenRecord> = {}): TokenRecord => ({
  id,
  name: `token ${id}`,
  hash: id.padEnd(64, '0'),
  prefix: 'pst_Ab-_',
  scopes: ['plants:read', 'metrics:read'],
  createdAt: new Date('2025-01-02T03:04:05.678Z'),
  expiresAt: new Date('2025-03-02T03:04:05.679Z'),
  revokedAt: null,
  ...fields,
});

for (const kind of stores) {
  describe(`the tokens [${kind}]`, suiteOptions(kind), () => {
    const s = suiteStore(kind, 2);

    const b = token('bbbb', { createdAt: new Date('2025-01-01T00:00:00.000Z'), expiresAt: null, prefix: '' });
    const a = token('aaaa', { scopes: ['plants:write'] });
    const c = token('cccc');

    it('keeps what it is given, finds it by its hash, lists oldest first (then by id) and counts', async () => {
      assert.equal(await s.store.tokens.count(), 0);
      for (const t of [c, a, b]) await s.store.tokens.insert(t);
      assert.deepEqual(await s.store.tokens.findByHash(a.hash), a);
      assert.deepEqual(await s.store.tokens.findByHash(b.hash), b);
      assert.equal(await s.store.tokens.findByHash('f'.repeat(64)), undefined);
      assert.deepEqual(await s.store.tokens.list(), [b, a, c]);
      assert.equal(await s.store.tokens.count(), 3);
    });

    it('revokes a token once: the first time is kept; an unknown id is reported', async () => {
      const first = new Date('2025-02-01T00:00:00.001Z');
      assert.equal(await s.store.tokens.revoke(a.id, first), true);
      assert.equal(await s.store.tokens.revoke(a.id, new Date('2025-02-02T00:00:00.000Z')), true);
      assert.deepEqual((await s.store.tokens.findByHash(a.hash))?.revokedAt, first);
      assert.equal(await s.store.tokens.revoke('nope', first), false);
      assert.equal((await s.store.tokens.findByHash(c.hash))?.revokedAt, null);
    });

    it('refuses a second token with the same hash, and keeps the first', async () => {
      await assert.rejects(s.store.tokens.insert(token('dddd', { hash: c.hash })));
      assert.equal((await s.store.tokens.findByHash(c.hash))?.id, c.id);
      assert.equal(await s.store.tokens.count(), 3);
    });
  });
}
