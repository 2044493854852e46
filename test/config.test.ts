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
  ] as const) {
    it(`refuses ${JSON.stringify(env)} with one line naming ${name}`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith(name) && !err.message.includes('\n'),
      );
    });
  }

  it('never echoes a database password', () => {
    assert.throws(
      () => loadStoreConfig({ DATABASE_URL: 'mysql://user:secret@host/db' }),
      (err: unknown) => err instanceof ConfigError && !err.message.includes('secret'),
    );
  });
});
