// The variables that turn traces on, read as the settings table reads every other: a bad one
// stops the start with one line; OTEL_SDK_DISABLED as OpenTelemetry's SDK reads it, in any case.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { tracesWanted } from '../../src/tracing/start.js';

const wanted = (env: Record<string, string>) => tracesWanted(loadConfig(env));

describe('the settings of traces', () => {
  it('are off unless an OTLP endpoint is set, and OTEL_SDK_DISABLED=true keeps them off', () => {
    assert.equal(wanted({}), false);
    assert.equal(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }), false, 'empty counts as unset');
    assert.equal(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
    assert.equal(wanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/v1/traces' }), true);
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    assert.equal(wanted({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }), false);
    assert.equal(wanted({ ...endpoint, OTEL_SDK_DISABLED: 'false' }), true);
  });

  it('refuse an endpoint that is not an http(s) URL, and a flag that is not true or false, with one line', () => {
    assert.throws(
      () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' }),
      (err: Error) => err instanceof ConfigError && /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:secret@' }),
      (err: Error) => err instanceof ConfigError && !err.message.includes('secret'),
    );
    assert.throws(
      () => loadConfig({ OTEL_SDK_DISABLED: 'yes' }),
      (err: Error) => err instanceof ConfigError && /OTEL_SDK_DISABLED must be true or false/.test(err.message),
    );
  });
});
