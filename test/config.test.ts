import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ConfigError, jwtConfig, loadConfig, loadSettings, STORE_SETTINGS } from '../src/config/config.js';
import { settingsMarkdown } from '../src/config/docs.js';
import { parseHosts } from '../src/config/database-url.js';
import { SETTINGS } from '../src/config/settings.js';

const loadStoreConfig = (env: Record<string, string>) => loadSettings(env, STORE_SETTINGS);

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.databaseUrl, 'sqlite:./data/plant-store.db');
    assert.equal(c.logLevel, 'info');
    assert.equal(c.bootstrapToken, undefined);
    assert.equal(c.bodyLimitBytes, 16384);
    assert.equal(c.headersTimeoutMs, 10_000);
    assert.equal(c.requestTimeoutMs, 30_000);
    assert.equal(c.keepAliveTimeoutMs, 5_000);
    assert.equal(jwtConfig(c), undefined);
    assert.equal(c.rateLimitPerWindow, 600_000);
    assert.equal(c.authFailureLimitPerWindow, 60);
    assert.equal(c.rateLimitWindowSeconds, 60);
    assert.equal(c.redisUrl, undefined);
    assert.equal(c.metricsPort, undefined);
    assert.equal(c.maxEventLoopDelayMs, 1000);
    assert.equal(c.maxWriteBacklog, 10_000);
    assert.equal(c.databasePoolSize, 10);
    assert.equal(c.webhookAllowPrivate, false);
    assert.equal(c.webhookRetryWindowMs, 24 * 3_600_000);
    assert.equal(c.webhookTimeoutMs, 10_000);
    assert.equal(c.webhookBackoffBaseMs, 1_000);
    assert.equal(c.webhookBackoffMaxMs, 3_600_000);
    assert.equal(c.webhookPollIntervalMs, 1_000);
    assert.equal(c.webhookConcurrency, 16);
    assert.equal(c.webhookSecretKey, undefined);
  });

  it('reads the webhook settings', () => {
    const c = loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_WINDOW: '90m', WEBHOOK_TIMEOUT_MS: '500' });
    assert.equal(c.webhookAllowPrivate, true);
    assert.equal(c.webhookRetryWindowMs, 90 * 60_000);
    assert.equal(c.webhookTimeoutMs, 500);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: '0' }).webhookAllowPrivate, false);
  });

  it('turns JWT mode on with a JWKS URL, an issuer and an audience; flags win', () => {
    const env = {
      JWT_JWKS_URL: 'https://idp.example/jwks',
      JWT_ISSUER: 'https://idp.example/',
      JWT_AUDIENCE: 'plants',
    };
    assert.deepEqual(jwtConfig(loadConfig(env)), {
      jwksUrl: 'https://idp.example/jwks',
      jwksFile: undefined,
      issuer: 'https://idp.example/',
      audience: 'plants',
      jwksCooldownMs: 30_000,
    });
    const flagged = jwtConfig(
      loadConfig(env, { jwtJwksUrl: 'http://127.0.0.1:8080/keys', jwtIssuer: 'other', jwtAudience: 'aud' }),
    );
    assert.equal(flagged?.jwksUrl, 'http://127.0.0.1:8080/keys');
    assert.equal(flagged?.issuer, 'other');
    assert.equal(flagged?.audience, 'aud');
    assert.equal(loadConfig({ METRICS_PORT: '9100', HOST: '10.0.0.1' }).metricsHost, undefined, 'HOST is used');
    assert.equal(loadConfig({ METRICS_PORT: '0' }).metricsPort, 0);
  });

  it('takes postgres:// and postgresql:// URLs, a schema and a pool size', () => {
    for (const url of ['postgres://u@db:5432/plants', 'postgresql://u:p@db/plants?schema=tenant_1&sslmode=require']) {
      assert.equal(loadStoreConfig({ DATABASE_URL: url }).databaseUrl, url);
    }
    assert.equal(loadStoreConfig({ DATABASE_POOL_SIZE: '25' }).databasePoolSize, 25);
  });

  it('takes standbys for reads: one host or several, libpq style, a lag bound, on a PostgreSQL store', () => {
    const primary = 'postgres://u@db1/plants?schema=tenant_1';
    const read = 'postgres://u:p@db2:5433,[::1]:5434,db4/plants?schema=tenant_1&sslmode=disable';
    const c = loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: read, DATABASE_READ_MAX_LAG: '2s' });
    assert.equal(c.databaseReadUrl, read);
    assert.equal(c.databaseReadMaxLagMs, 2_000);
    assert.equal(loadConfig({}).databaseReadMaxLagMs, 5_000);
    assert.equal(loadConfig({}).databaseReadUrl, undefined);
    assert.deepEqual(parseHosts(read, 'DATABASE_READ_URL'), [
      { name: 'db2:5433', url: 'postgres://u:p@db2:5433/plants?schema=tenant_1&sslmode=disable' },
      { name: '[::1]:5434', url: 'postgres://u:p@[::1]:5434/plants?schema=tenant_1&sslmode=disable' },
      { name: 'db4', url: 'postgres://u:p@db4/plants?schema=tenant_1&sslmode=disable' },
    ]);
    // Without schema=, the standbys are read on DATABASE_URL's.
    assert.equal(
      loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://u@db2/plants' }).databaseReadUrl,
      'postgres://u@db2/plants',
    );
    for (const [env, why] of [
      [{ DATABASE_READ_URL: 'postgres://u@db2/plants' }, /needs a postgres:\/\/ DATABASE_URL/],
      [{ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://u@db2/plants?schema=other' }, /schema=other differs/],
      [
        { DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://u@db2/plants?sslmode=requir' },
        /^DATABASE_READ_URL sslmode must be/,
      ],
      [{ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://u@db2,,db3/plants' }, /host list/],
      [{ DATABASE_URL: primary, DATABASE_READ_URL: 'sqlite:x.db' }, /one host or several/],
      [{ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://u@db2/plants?schema=pg_x' }, /PostgreSQL's/],
      [
        { DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://u:secret@db2:99999,db3/plants' },
        /a port from 1 to 65535/,
      ],
      [
        { DATABASE_READ_MAX_LAG: '500ms' },
        /DATABASE_READ_MAX_LAG must look like 2s, 30s or 1m: .*at least 1s \(got "500ms"\)$/,
      ],
    ] as const) {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) =>
          err instanceof ConfigError &&
          /^DATABASE_READ_/.test(err.message) &&
          why.test(err.message) &&
          !/secret/.test(err.message),
        JSON.stringify(env),
      );
    }
  });

  it("refuses PostgreSQL's own schemas and names that are not plain identifiers for ?schema=, in one line", () => {
    for (const [schema, why] of [
      ['information_schema', /"information_schema" is PostgreSQL's/],
      ['pg_catalog', /"pg_catalog" is PostgreSQL's/],
      ['pg_toast', /"pg_toast" is PostgreSQL's/],
      ['pg_plants', /"pg_plants" is PostgreSQL's/],
      ['Plants', /lower-case identifier/],
      ['1plants', /lower-case identifier/],
      ['plants;drop', /lower-case identifier/],
      ['a b', /lower-case identifier/],
      ['plants,public', /lower-case identifier/],
      ['"plants"', /lower-case identifier/],
      ['p'.repeat(64), /lower-case identifier/],
    ] as const) {
      const url = `postgres://u@db/plants?schema=${encodeURIComponent(schema)}`;
      assert.throws(
        () => loadStoreConfig({ DATABASE_URL: url }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.message.startsWith('DATABASE_URL schema= must ') &&
          why.test(err.message) &&
          !err.message.includes('\n'),
        schema,
      );
    }
    for (const schema of ['plants', '_plants', 'pg', 'pgplants', 'user', 'p'.repeat(63)]) {
      const url = `postgres://u@db/plants?schema=${schema}`;
      assert.equal(loadStoreConfig({ DATABASE_URL: url }).databaseUrl, url);
    }
  });

  it('lets flags win over the environment', () => {
    const c = loadConfig({ PORT: '4000', HOST: '::1' }, { port: '5000' });
    assert.equal(c.port, 5000);
    assert.equal(c.host, '::1');
  });

  it('refuses a renamed variable with one line naming its new name', () => {
    assert.throws(
      () => loadConfig({ RATE_LIMIT_PER_MINUTE: '100' }),
      (err: unknown) =>
        err instanceof ConfigError && /^RATE_LIMIT_PER_MINUTE was renamed RATE_LIMIT_PER_WINDOW/.test(err.message),
    );
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
    [{ JWT_ISSUER: 'x', JWT_AUDIENCE: 'y' }, 'JWT_ISSUER'],
    [{ JWT_JWKS_URL: 'https://a/jwks', JWT_JWKS_FILE: 'f.json', JWT_ISSUER: 'x', JWT_AUDIENCE: 'y' }, 'JWT_JWKS_URL'],
    [{ JWT_JWKS_URL: 'https://a/jwks', JWT_AUDIENCE: 'y' }, 'JWT_ISSUER'],
    [{ JWT_JWKS_URL: 'https://a/jwks', JWT_ISSUER: 'x' }, 'JWT_AUDIENCE'],
    [{ JWT_JWKS_URL: 'http://idp.example/jwks', JWT_ISSUER: 'x', JWT_AUDIENCE: 'y' }, 'JWT_JWKS_URL'],
    [{ JWT_JWKS_URL: 'not a url', JWT_ISSUER: 'x', JWT_AUDIENCE: 'y' }, 'JWT_JWKS_URL'],
    [
      { JWT_JWKS_URL: 'https://a/jwks', JWT_ISSUER: 'x', JWT_AUDIENCE: 'y', JWT_JWKS_COOLDOWN_MS: '-1' },
      'JWT_JWKS_COOLDOWN_MS',
    ],
    [{ RATE_LIMIT_PER_WINDOW: '-1' }, 'RATE_LIMIT_PER_WINDOW'],
    [{ AUTH_FAILURE_LIMIT_PER_WINDOW: 'many' }, 'AUTH_FAILURE_LIMIT_PER_WINDOW'],
    [{ RATE_LIMIT_WINDOW_SECONDS: '0' }, 'RATE_LIMIT_WINDOW_SECONDS'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '3000' }, 'METRICS_PORT'],
    [{ MAX_EVENT_LOOP_DELAY_MS: '1s' }, 'MAX_EVENT_LOOP_DELAY_MS'],
    [{ MAX_WRITE_BACKLOG: '-5' }, 'MAX_WRITE_BACKLOG'],
    [{ DATABASE_URL: 'postgres:db' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://h/db?schema=Bad-Name' }, 'DATABASE_URL'],
    // pg took any other sslmode as some TLS: a server without it answered "does not support SSL".
    [{ DATABASE_URL: 'postgres://h/db?sslmode=bogus' }, 'DATABASE_URL'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE'],
    [{ DATABASE_POOL_SIZE: 'ten' }, 'DATABASE_POOL_SIZE'],
    [{ WEBHOOK_ALLOW_PRIVATE: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE'],
    [{ WEBHOOK_RETRY_WINDOW: '24' }, 'WEBHOOK_RETRY_WINDOW'],
    [{ WEBHOOK_TIMEOUT_MS: '0' }, 'WEBHOOK_TIMEOUT_MS'],
    [{ WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY'],
    [{ WEBHOOK_SECRET_KEY: 'c2hvcnQ=' }, 'WEBHOOK_SECRET_KEY'],
  ] as const) {
    it(`refuses ${JSON.stringify(env)} with one line naming ${name}`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith(name) && !err.message.includes('\n'),
      );
    });
  }

  it('never echoes a Redis password', () => {
    assert.throws(
      () => loadConfig({ REDIS_URL: 'redis//user:secret@host' }),
      (err: unknown) =>
        err instanceof ConfigError && err.message.startsWith('REDIS_URL') && !err.message.includes('secret'),
    );
  });

  it('never echoes a database password, and keeps the user name', () => {
    for (const url of [
      'mysql://user:secret@host/db',
      'postgres://user:secret@host/db?schema=NOPE',
      'postgres://user:sec/ret@host/db?schema=NOPE',
      'postgres://user:sec@ret@host/db?schema=NOPE',
    ]) {
      assert.throws(
        () => loadStoreConfig({ DATABASE_URL: url }),
        (err: unknown) =>
          err instanceof ConfigError &&
          /DATABASE_URL/.test(err.message) &&
          !/sec/.test(err.message) &&
          err.message.includes('//user:***@'),
        url,
      );
    }
  });
});

describe('the settings table', () => {
  it('is the settings table of docs/reference/settings.md, row for row (regenerate with npm run docs:settings)', () => {
    const readme = readFileSync(new URL('../docs/reference/settings.md', import.meta.url), 'utf8');
    const between = /<!-- settings:start -->\n\n([\s\S]*?)\n\n<!-- settings:end -->/.exec(readme);
    assert.ok(between, 'docs/reference/settings.md has the settings markers');
    assert.equal(between[1], settingsMarkdown());
  });

  it('gives every setting a distinct variable, a doc line, and a default that its own parser accepts', () => {
    const names = Object.values(SETTINGS).map((s) => s.env);
    assert.equal(new Set(names).size, names.length);
    for (const s of Object.values(SETTINGS)) {
      assert.ok(s.doc.length > 0 && !s.doc.includes('\n'), s.env);
      if (s.default !== undefined && s.shown === undefined) {
        assert.deepEqual((s.parse as (t: string, n: string) => unknown)(String(s.default), s.env), s.default, s.env);
      }
    }
  });
});
