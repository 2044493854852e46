import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bootstrapToken } from '../../src/use-cases/bootstrap-token.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { tempSqliteStore } from '../support/temp-store.js';
import type { Store } from '../../src/store/store.js';

describe('bootstrapToken', () => {
  const value = 'pst_the-same-value-on-every-instance-0123456789';

  it('registers PLANT_STORE_TOKEN once, then leaves it as it is', async () => {
    const store = await tempSqliteStore();
    assert.deepEqual(await bootstrapToken(store, value), { kind: 'registered' });
    assert.deepEqual(await bootstrapToken(store, value), { kind: 'none' });
    assert.equal(await store.tokens.count(), 1);
    await store.close();
  });

  it('loses the race gracefully when another instance registers the same value between its check and its insert', async () => {
    const store = await tempSqliteStore();
    let checks = 0;
    // The other instance's insert lands right after this instance found nothing.
    const racing: Pick<Store, 'tokens'> = {
      tokens: Object.assign(Object.create(store.tokens) as Store['tokens'], {
        async findByHash(hash: string) {
          if (checks++ === 0) {
            await createToken(store, { name: 'other instance', value });
            return undefined;
          }
          return store.tokens.findByHash(hash);
        },
      }),
    };
    assert.deepEqual(await bootstrapToken(racing, value), { kind: 'none' });
    assert.equal(await store.tokens.count(), 1);
    await store.close();
  });
});
