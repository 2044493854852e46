import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, loadStoreConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.databaseUrl, 'sqlite:./data/plant-store.db');
    assert.equal(c.logLevel, 'info');
    assert.equal(c.bootstrapToken, undefined);
    assert.equal(c.bodyLimit, 16384);
    assert.equal(c.headersTimeoutMs, 10_000);
    assert.equal(c.requestTimeoutMs, 30_000);
    assert.equal(c.keepAliveTimeoutMs, 5_000);
    assert.equal(c.poolSize, 10);
  });

  it('takes postgres:// and postgresql:// URLs, a schema and a pool size', () => {
    for (const url of ['postgres://u@db:5432/plants', 'postgresql://u:p@db/plants?schema=tenant_1&sslmode=require']) {
      assert.equal(loadStoreConfig({ DATABASE_URL: url }).databaseUrl, url);
    }
    assert.equal(loadStoreConfig({ DATABASE_POOL_SIZE: '25' }).poolSize, 25);
  });

  it('lets flags win over the environment', () => {
    const c = loadConfig({ PORT: '4000', HOST: '::1' }, { port: '5000' });
    assert.equal(c.port, 5000);
    assert.equal(c.host, '::1');
  });

  for (const [env, name] of [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '65536' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ PLANT_STORE_TOKEN: 'short' }, 'PLANT_STORE_TOKEN'],
    [{ PLANT_STORE_TOKEN: 'has a space in it, which is not allowed' }, 'PLANT_STORE_TOKEN'],
    [{ HEADERS_TIMEOUT_MS: '0' }, 'HEADERS_TIMEOUT_MS'],
    [{ BODY_LIMIT_BYTES: '1k' }, 'BODY_LIMIT_BYTES'],
    [{ DATABASE_URL: 'postgres:db' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://h/db?schema=Bad-Name' }, 'DATABASE_URL'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE'],
    [{ DATABASE_POOL_SIZE: 'ten' }, 'DATABASE_POOL_SIZE'],
  ] as const) {
    it(`refuses ${JSON.stringify(env)} with one line naming ${name}`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith(name) && !err.message.includes('\n'),
      );
    });
  }

  it('never echoes a database password', () => {
    for (const url of [
      'mysql://user:secret@host/db',
      'postgres://user:secret@host/db?schema=NOPE',
      'postgres://user:sec/ret@host/db?schema=NOPE',
      'postgres://user:sec@ret@host/db?schema=NOPE',
    ]) {
      assert.throws(
        () => loadStoreConfig({ DATABASE_URL: url }),
        (err: unknown) => err instanceof ConfigError && /DATABASE_URL/.test(err.message) && !/sec/.test(err.message),
        url,
      );
    }
  });
});
