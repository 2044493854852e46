import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  beginWith,
  localSettings,
  postgresSettings,
  STATEMENT_TIMEOUT_MS,
} from '../../src/store/postgres/connection.js';
import { isHostFailure, isUnavailable, storeError } from '../../src/store/postgres/errors.js';
import { StoreUnavailableError } from '../../src/domain/errors.js';

describe('postgres connection settings', () => {
  it('takes ?schema= out of the URL, keeps other options and the rest of the URL, bounds the pool', () => {
    const s = postgresSettings('postgres://u:p@db:6543/plants?schema=tenant_1&options=-c%20work_mem%3D8MB', 7);
    assert.equal(s.schema, 'tenant_1');
    assert.equal(s.pool.options, '-c work_mem=8MB');
    assert.equal(s.pool.connectionString, 'postgres://u:p@db:6543/plants');
    assert.equal(s.pool.max, 7);
    assert.ok(Number(s.pool.connectionTimeoutMillis) > 0);
  });

  it('asks for no setting at connection start-up, which a transaction-mode pooler refuses: each transaction sets its own', () => {
    const s = postgresSettings('postgres://db/plants?schema=tenant_1', 7);
    const startUp = ['options', 'statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout'];
    for (const key of startUp) assert.equal((s.pool as Record<string, unknown>)[key], undefined, key);
    assert.equal(s.pool.application_name, 'plant-store');
    assert.deepEqual(localSettings('tenant_1', { statementTimeoutMs: 4000 }), [
      'SET LOCAL statement_timeout = 4000',
      'SET LOCAL search_path = "tenant_1"',
    ]);
    assert.equal(
      beginWith(undefined, { statementTimeoutMs: 0, idleMs: 10_000 }, 'BEGIN READ ONLY'),
      'BEGIN READ ONLY;\nSET LOCAL statement_timeout = 0;\nSET LOCAL idle_in_transaction_session_timeout = 10000',
    );
    assert.ok(Number(s.pool.query_timeout) > STATEMENT_TIMEOUT_MS, 'the server cancels first');
  });

  it('gives each host of a list the same URL otherwise, and one host its URL as the pool has it', () => {
    const s = postgresSettings('postgres://u:p@db1:5432,[::1]:5433/plants?schema=t&sslmode=require', 7);
    assert.deepEqual(s.hosts, [
      { name: 'db1:5432', connectionString: 'postgres://u:p@db1:5432/plants?sslmode=verify-full' },
      { name: '[::1]:5433', connectionString: 'postgres://u:p@[::1]:5433/plants?sslmode=verify-full' },
    ]);
    assert.equal(s.pool.options, undefined, 'the schema is set by each transaction, not at start-up');
    const one = postgresSettings('postgres://u@db:6543/plants?schema=t', 7);
    assert.deepEqual(one.hosts, [{ name: 'db:6543', connectionString: one.pool.connectionString }]);
  });

  it('refuses, where the name goes into the start-up options, a ?schema= the settings refuse', () => {
    for (const schema of ['information_schema', 'pg_catalog', 'a%20-c%20x%3Dy', 'x%2Cpublic']) {
      assert.throws(
        () => postgresSettings(`postgres://db/plants?schema=${schema}`, 1),
        /^ConfigError: DATABASE_URL schema= must/,
      );
    }
  });

  it('leaves the server search_path alone without ?schema=', () => {
    const s = postgresSettings('postgresql://db/plants?sslmode=disable', 10);
    assert.equal(s.schema, undefined);
    assert.equal(s.pool.options, undefined);
    assert.equal(s.pool.connectionString, 'postgresql://db/plants?sslmode=disable');
  });

  it('reads sslmode=require, prefer and verify-ca as the verify-full pg 8 reads them as, without its warning', () => {
    for (const mode of ['require', 'prefer', 'verify-ca']) {
      const s = postgresSettings(`postgresql://db/plants?sslmode=${mode}`, 10);
      assert.equal(s.pool.connectionString, 'postgresql://db/plants?sslmode=verify-full');
    }
    // libpq's meanings, asked for: pg reads them so, and does not warn.
    const libpq = 'postgresql://db/plants?uselibpqcompat=true&sslmode=require';
    assert.equal(postgresSettings(libpq, 10).pool.connectionString, libpq);
  });
});

describe('postgres error mapping', () => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('calls outages unavailable: network errors, connection and shutdown states, driver time-outs', () => {
    for (const err of [
      coded('ECONNREFUSED'),
      coded('ECONNRESET'),
      coded('08006'),
      coded('57P01'),
      coded('57014'),
      coded('25006', 'cannot execute INSERT in a read-only transaction'),
      coded('53300'),
      coded('40001'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      new Error('Connection terminated due to connection timeout', { cause: new Error('timeout expired') }),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]),
    ]) {
      assert.equal(isUnavailable(err), true, err.message || String((err as { code?: string }).code));
      assert.ok(storeError(err) instanceof StoreUnavailableError);
    }
  });

  it('tells a host that is gone or takes no writes from a database that is busy', () => {
    for (const err of [
      coded('ECONNREFUSED'),
      coded('08006'),
      coded('57P01'),
      coded('57P03'),
      coded('25006'),
      new Error('Connection terminated unexpectedly'),
      new StoreUnavailableError(coded('ECONNRESET')),
    ]) {
      assert.equal(isHostFailure(err), true, err.message || String((err as { code?: string }).code));
    }
    for (const err of [
      coded('57014'),
      coded('55P03'),
      coded('53300'),
      coded('40001'),
      coded('23505'),
      new TypeError('x'),
      // The pool's own connections all in use: this process is busy, its primary is not away.
      new Error('timeout exceeded when trying to connect'),
      new StoreUnavailableError(new Error('timeout exceeded when trying to connect')),
    ]) {
      assert.equal(isHostFailure(err), false, String((err as { code?: string }).code));
    }
  });

  it('tells contention (deadlock, serialization, a lock or statement past its time) from an outage', () => {
    for (const code of ['40P01', '40001', '55P03', '57014']) {
      const err = storeError(coded(code));
      assert.ok(err instanceof StoreUnavailableError, code);
      assert.equal(err.message, 'the store is busy with other writes; retry later', code);
    }
    assert.equal((storeError(coded('57P01')) as Error).message, 'the store is unavailable; retry later');
    assert.equal(
      (storeError(new Error('timeout exceeded when trying to connect')) as Error).message,
      'every connection to the store is busy; retry later',
    );
  });

  it('leaves bugs and bad statements alone, so they stay 500s', () => {
    for (const err of [coded('23505'), coded('42P01'), coded('22P02'), new TypeError('x is undefined'), 'text']) {
      assert.equal(isUnavailable(err), false, String(err));
      assert.equal(storeError(err), err);
    }
  });
});
