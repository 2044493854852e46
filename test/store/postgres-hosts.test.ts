import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadSettings, STORE_SETTINGS } from '../../src/config/config.js';
import { parseHosts } from '../../src/store/postgres/hosts.js';

describe('the hosts of DATABASE_URL', () => {
  it('reads a libpq host list in its order, each host with the rest of the URL as given', () => {
    assert.deepEqual(parseHosts('postgres://u:p@db1:5432,db2:5433,[::1]:6000,db4/plants?schema=s&sslmode=require'), [
      { name: 'db1:5432', url: 'postgres://u:p@db1:5432/plants?schema=s&sslmode=require' },
      { name: 'db2:5433', url: 'postgres://u:p@db2:5433/plants?schema=s&sslmode=require' },
      { name: '[::1]:6000', url: 'postgres://u:p@[::1]:6000/plants?schema=s&sslmode=require' },
      { name: 'db4', url: 'postgres://u:p@db4/plants?schema=s&sslmode=require' },
    ]);
    assert.deepEqual(parseHosts('postgresql://h1,h2'), [
      { name: 'h1', url: 'postgresql://h1' },
      { name: 'h2', url: 'postgresql://h2' },
    ]);
  });

  it('keeps a URL of one host exactly as given', () => {
    for (const url of ['postgres://u:p@db:6543/plants?schema=t', 'postgresql:///plants', 'postgres://db']) {
      assert.deepEqual(parseHosts(url), [{ name: new URL(url).host, url }]);
    }
  });

  for (const [list, why] of [
    ['db1,,db2', /names "" in its host list "db1,,db2": name each host as host or host:port/],
    ['db1,', /names "" in its host list "db1,"/],
    [',db1', /names "" in its host list ",db1"/],
    ['db1:5432,db2:port', /names "db2:port"/],
    ['db1,db2:0', /names "db2:0" .*a port from 1 to 65535/],
    ['db1,db2:65536', /names "db2:65536"/],
    ['db1,db2:5432:1', /names "db2:5432:1"/],
    ['db1,::1', /names "::1"/],
    ['db1:5432,db1:5432', /names db1:5432 twice in its host list/],
    ['db1,db 2', /not a valid postgres:\/\/ URL with the host db 2 of its list/],
  ] as const) {
    it(`refuses the host list "${list}" in one line that says what is wrong, without the password`, () => {
      const url = `postgres://u:secret@${list}/plants`;
      for (const parse of [() => parseHosts(url), () => loadSettings({ DATABASE_URL: url }, STORE_SETTINGS)]) {
        assert.throws(
          parse,
          (err: unknown) =>
            err instanceof ConfigError &&
            err.message.startsWith('DATABASE_URL ') &&
            why.test(err.message) &&
            !err.message.includes('secret') &&
            !err.message.includes('\n'),
          list,
        );
      }
    });
  }

  it('names the setting it reads, for another URL of hosts', () => {
    assert.throws(
      () => parseHosts('postgres://a,,b/db', 'DATABASE_READ_URL'),
      /^ConfigError: DATABASE_READ_URL names ""/,
    );
  });

  it('checks ?schema= of a list as of one host', () => {
    assert.throws(
      () => loadSettings({ DATABASE_URL: 'postgres://db1,db2/plants?schema=pg_x' }, STORE_SETTINGS),
      /DATABASE_URL schema= must name a schema of your own/,
    );
    const url = 'postgres://db1,db2:5433/plants?schema=tenant_1';
    assert.equal(loadSettings({ DATABASE_URL: url }, STORE_SETTINGS).databaseUrl, url);
  });
});
