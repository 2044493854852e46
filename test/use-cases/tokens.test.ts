// The tokens' use-cases on the memory store: creating (what is kept, what is refused), revoking,
// and the first start's bootstrap token. No database; the same end to end: test/auth/, and the
// CLI's token commands in test/cli/token-and-migrate.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidInputError, NotFoundError } from '../../src/domain/errors.js';
import { hashToken, SCOPES } from '../../src/domain/token.js';
import { bootstrapToken } from '../../src/use-cases/bootstrap-token.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { revokeToken } from '../../src/use-cases/revoke-token.js';
import { MemoryStore } from '../support/memory-store.js';

const now = new Date('2026-01-02T03:04:05.678Z');

describe('creating a token', () => {
  it('keeps its hash, never the token, with a prefix of pst_ and 4 characters', async () => {
    const store = new MemoryStore();
    const { token, record } = await createToken(store, { name: 'ci', scopes: ['plants:read', 'plants:read'] }, now);
    assert.match(token, /^pst_[A-Za-z0-9_-]{43}$/);
    const [kept] = await store.tokens.list();
    assert.deepEqual(kept, record);
    assert.equal(kept!.hash, hashToken(token));
    assert.equal(kept!.prefix, token.slice(0, 8));
    assert.deepEqual(kept!.scopes, ['plants:read'], 'scopes once each');
    assert.equal(JSON.stringify(kept).includes(token), false);
  });

  it('gives every scope by default and keeps no part of an operator-chosen value', async () => {
    const store = new MemoryStore();
    const { token, record } = await createToken(store, { name: 'op', value: 'chosen-by-the-operator' }, now);
    assert.equal(token, 'chosen-by-the-operator');
    assert.equal(record.prefix, '');
    assert.deepEqual(record.scopes, [...SCOPES]);
  });

  it('refuses no scopes and an expiry in the past, storing nothing', async () => {
    const store = new MemoryStore();
    await assert.rejects(createToken(store, { name: 'x', scopes: [] }, now), InvalidInputError);
    await assert.rejects(
      createToken(store, { name: 'x', expiresAt: new Date(now.getTime() - 1) }, now),
      InvalidInputError,
    );
    assert.equal(await store.tokens.count(), 0);
  });
});

describe('revoking a token', () => {
  it('marks it revoked once: revoking again keeps the first time', async () => {
    const store = new MemoryStore();
    const { record } = await createToken(store, { name: 'x' }, now);
    const first = new Date(now.getTime() + 1000);
    await revokeToken(store, record.id, first);
    await revokeToken(store, record.id, new Date(now.getTime() + 2000));
    assert.deepEqual((await store.tokens.findByHash(record.hash))!.revokedAt, first);
  });

  it('answers an unknown id as not found', async () => {
    await assert.rejects(revokeToken(new MemoryStore(), 'nope'), NotFoundError);
  });
});

describe('the bootstrap token', () => {
  it('is generated on a store with no token, and only then', async () => {
    const store = new MemoryStore();
    const result = await bootstrapToken(store, undefined);
    assert.equal(result.kind, 'generated');
    assert.equal(await store.tokens.count(), 1);
    assert.deepEqual(await bootstrapToken(store, undefined), { kind: 'none' });
    assert.equal(await store.tokens.count(), 1);
  });

  it("registers the operator's token once, and never brings a revoked one back", async () => {
    const store = new MemoryStore();
    assert.deepEqual(await bootstrapToken(store, 'pst_operator'), { kind: 'registered' });
    const record = (await store.tokens.findByHash(hashToken('pst_operator')))!;
    await revokeToken(store, record.id);
    assert.deepEqual(await bootstrapToken(store, 'pst_operator'), { kind: 'none' });
    assert.notEqual((await store.tokens.findByHash(hashToken('pst_operator')))!.revokedAt, null);
    assert.equal(await store.tokens.count(), 1);
  });

  it('loses the race to another instance quietly: the hash is unique, one insert wins', async () => {
    const store = new MemoryStore();
    const results = await Promise.all([bootstrapToken(store, 'pst_same'), bootstrapToken(store, 'pst_same')]);
    assert.deepEqual(results.map((r) => r.kind).sort(), ['none', 'registered']);
    assert.equal(await store.tokens.count(), 1);
  });
});
