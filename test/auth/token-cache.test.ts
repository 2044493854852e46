import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedTokenLookup, rememberedTokenHashes } from '../../src/auth/token-cache.js';
import { hashToken, type TokenRecord } from '../../src/domain/token.js';
import { buildTestApp } from '../helper.js';
import type { Store } from '../../src/store/store.js';

const record: TokenRecord = {
  id: 'a',
  name: 'n',
  hash: 'h1',
  prefix: 'pst_',
  scopes: [],
  createdAt: new Date(0),
  expiresAt: null,
  revokedAt: null,
};

function countingStore(answer: () => TokenRecord | undefined) {
  const calls: string[] = [];
  const store = { tokens: { findByHash: async (hash: string) => (calls.push(hash), answer()) } } as unknown as Store;
  return { store, calls };
}

describe('cachedTokenLookup', () => {
  it('asks the store once per hash within the TTL, and again after it', async () => {
    let current: TokenRecord | undefined = record;
    const { store, calls } = countingStore(() => current);
    const find = cachedTokenLookup(store, 40);
    assert.equal(await find('h1'), record);
    assert.equal(await find('h1'), record);
    assert.equal(calls.length, 1);
    current = { ...record, revokedAt: new Date(1) };
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual((await find('h1'))?.revokedAt, new Date(1), 'a revocation is seen once the entry expires');
    assert.equal(calls.length, 2);
  });

  it('remembers unknown hashes too, and empties itself when full', async () => {
    const { store, calls } = countingStore(() => undefined);
    const find = cachedTokenLookup(store, 60_000, 3);
    for (const h of ['a', 'b', 'c', 'a']) assert.equal(await find(h), undefined);
    assert.equal(calls.length, 3);
    await find('d'); // full: emptied, then d stored
    await find('a');
    assert.equal(calls.length, 5);
  });

  it('shares one look-up among the requests that find an entry missing at the same time', async () => {
    const { store, calls } = countingStore(() => record);
    const find = cachedTokenLookup(store, 60_000);
    const found = await Promise.all(Array.from({ length: 50 }, () => find('h1')));
    assert.ok(found.every((r) => r === record));
    assert.equal(calls.length, 1);
  });
});

describe('rememberedTokenHashes', () => {
  it('hashes each token once, as the domain hashes it, and keeps at most its bound', () => {
    const hashed: string[] = [];
    const hashOf = rememberedTokenHashes(2, (t) => (hashed.push(t), hashToken(t)));
    assert.equal(hashOf('pst_a'), hashToken('pst_a'));
    assert.equal(hashOf('pst_a'), hashToken('pst_a'));
    assert.equal(hashOf('pst_b'), hashToken('pst_b'));
    assert.deepEqual(hashed, ['pst_a', 'pst_b']);
    // A third token empties it: the first is hashed again.
    hashOf('pst_c');
    hashOf('pst_a');
    assert.deepEqual(hashed, ['pst_a', 'pst_b', 'pst_c', 'pst_a']);
  });

  it("is what the app's bearer check hashes with (SQLite only: no store work)", async () => {
    const app = await buildTestApp({ store: 'sqlite' });
    try {
      const { hashOf } = app.services.verifiers;
      assert.ok(hashOf, 'the services remember hashes');
      assert.equal(hashOf(app.token), hashToken(app.token));
      assert.equal(
        (await app.inject({ path: '/plants', headers: { authorization: `Bearer ${app.token}` } })).status,
        200,
      );
    } finally {
      await app.close();
    }
  });
});
