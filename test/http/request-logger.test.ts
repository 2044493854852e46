// A request's logger makes pino's child only when something logs through it, and meanwhile gives
// the request's line the same bindings text the child would have.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it, mock } from 'node:test';
import { pino } from 'pino';
import { RequestLogger } from '../../src/http/request-logger.js';
import { buildTestApp } from '../helper.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  // A child with options, as Fastify's own logger over the service's is.
  const parent = pino({ base: { pid: 1, hostname: 'h' } }, stream).child({}, { serializers: {} });
  return { parent, lines };
}

const chindingsOf = (logger: pino.Logger) => (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];

describe('a request logger', () => {
  it('makes no child of pino until something logs through it', () => {
    const { parent } = capture();
    const child = mock.method(parent, 'child');
    const log = RequestLogger.factory(parent, { reqId: 'r1' }, {});
    assert.equal(log.level, 'info');
    assert.equal(log.isLevelEnabled('info'), true);
    void log.chindings;
    assert.equal(child.mock.callCount(), 0);
    log.info('once');
    log.warn('twice');
    assert.equal(child.mock.callCount(), 1);
  });

  it("gives the bindings text of pino's child, before and after the child is made", () => {
    const { parent } = capture();
    const own = { reqId: 'id "quoted" \\ é\n' };
    const log = RequestLogger.factory(parent, own, {});
    const expected = chindingsOf(parent.child(own, {}));
    assert.equal(log.chindings, expected);
    log.setBindings({ traceId: 't1' });
    assert.equal(log.chindings, `${expected},"traceId":"t1"`);
  });

  it("writes pino's lines with the request's bindings", () => {
    const { parent, lines } = capture();
    const log = RequestLogger.factory(parent, { reqId: 'r2' }, {});
    log.warn({ err: new Error('boom') }, 'a warning');
    log.debug('not at info');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.reqId, 'r2');
    assert.equal(lines[0]!.msg, 'a warning');
    assert.equal(lines[0]!.level, 40);
  });
});

describe("the app's request loggers", () => {
  it('are RequestLoggers (SQLite only: no store work)', async () => {
    const app = await buildTestApp({ store: 'sqlite' });
    try {
      assert.equal(app.app.childLoggerFactory, RequestLogger.factory);
    } finally {
      await app.close();
    }
  });
});
