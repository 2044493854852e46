// The SDK's own complaints in the service's log: a collector it cannot reach is a warning whose
// `err` has its message and code, as every error in the log has (test/log/errors.test.ts). The
// exporter hands its failure over as JSON text; it used to be the line's message, as it came.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { diag } from '@opentelemetry/api';
import { createLogger } from '../../src/log.js';
import { diagnostics } from '../../src/tracing/sdk.js';

describe("the SDK's complaints in the log", () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  diagnostics(createLogger('info', sink));
  after(() => diag.disable());

  it('an export that failed: a warning with the error, its message and its code', () => {
    // What the OTLP exporter passes when the collector refuses the connection.
    const failure = new Error('connect ECONNREFUSED 127.0.0.1:4318');
    diag.error(JSON.stringify({ stack: failure.stack, message: failure.message, code: 'ECONNREFUSED', name: 'Error' }));
    const line = lines.at(-1)!;
    assert.equal(line.level, 40);
    assert.equal(line.msg, 'OpenTelemetry: connect ECONNREFUSED 127.0.0.1:4318');
    const { type, message, code, stack } = line.err as Record<string, string>;
    assert.deepEqual([type, message, code], ['Error', 'connect ECONNREFUSED 127.0.0.1:4318', 'ECONNREFUSED']);
    assert.match(stack!, /^Error: connect ECONNREFUSED/);
  });

  it('any other complaint: its text, and what came with it', () => {
    diag.warn('a span limit was reached', 128);
    assert.deepEqual([lines.at(-1)!.msg, lines.at(-1)!.otel], ['OpenTelemetry: a span limit was reached', ['128']]);
  });
});
