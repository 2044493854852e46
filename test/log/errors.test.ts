// Every error in the log carries its message and its code, whatever raised it: a connection
// refused on every address of a name (an AggregateError whose own message is empty), an outage
// wrapped in the store's error, Redis gone while the server runs.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailableError } from '../../src/domain/errors.js';
import { createLogger } from '../../src/log.js';
import { startServer, type ServerProcess } from '../support/server.js';

type LoggedError = { type?: string; message?: string; code?: string; stack?: string };

/** The `err` of the one line logged for `err`, as the server's logger writes it. */
function logged(err: unknown): LoggedError {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  createLogger('info', sink).warn({ err }, 'it failed');
  assert.equal(lines.length, 1);
  return (JSON.parse(lines[0]!) as { err: LoggedError }).err;
}

const refused = (address: string) =>
  Object.assign(new Error(`connect ECONNREFUSED ${address}:6379`), { code: 'ECONNREFUSED' });

describe('an error in the log', () => {
  it('has its own message, code and type', () => {
    const err = logged(refused('127.0.0.1'));
    assert.equal(err.type, 'Error');
    assert.equal(err.message, 'connect ECONNREFUSED 127.0.0.1:6379');
    assert.equal(err.code, 'ECONNREFUSED');
  });

  it("an AggregateError without a message of its own: the first error's message and code", () => {
    const both = new AggregateError([refused('::1'), refused('127.0.0.1')], '');
    const err = logged(both);
    assert.equal(err.type, 'AggregateError');
    assert.equal(err.message, 'connect ECONNREFUSED ::1:6379');
    assert.equal(err.code, 'ECONNREFUSED');
  });

  it("a wrapping error: its message with its cause's, and the cause's code", () => {
    const err = logged(new StoreUnavailableError(refused('127.0.0.1')));
    assert.match(err.message!, /^the store is unavailable; retry later: connect ECONNREFUSED/);
    assert.equal(err.code, 'ECONNREFUSED');
  });

  it('something thrown that is not an Error still has a message', () => {
    assert.equal(logged('a string').message, 'a string');
    assert.equal(logged({ code: 'EX' }).code, 'EX');
    assert.ok(logged({ code: 'EX' }).message);
  });
});

describe('the server with its Redis gone', () => {
  let server: ServerProcess | undefined;
  after(() => server?.dispose());

  it('warns with the error, its message and its code', async () => {
    // A port nothing listens on: Redis refuses every connection.
    const probe = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => probe.once('listening', r));
    const { port } = probe.address() as { port: number };
    await new Promise((r) => probe.close(r));
    server = await startServer({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    const warning = () =>
      server!.stdout
        .map((l) => JSON.parse(l) as { msg?: string; err?: LoggedError })
        .find((l) => /^rate-limit store \(Redis\) unreachable/.test(l.msg ?? ''));
    for (let i = 0; i < 100 && !warning(); i++) await sleep(25);
    const err = warning()?.err;
    assert.ok(err, server.stdout.join('\n'));
    assert.equal(err.code, 'ECONNREFUSED');
    assert.match(err.message!, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
    assert.notEqual(err.type, 'Object');
  });
});
