// OpenTelemetry's Node SDK, started from the standard OTEL_* variables: loaded by start.ts only
// when traces are on, so that a server without them never loads a module of it.
import { readFileSync } from 'node:fs';
import { context, diag, DiagLogLevel, propagation, trace, type DiagLogFunction } from '@opentelemetry/api';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { otelTracing } from './spans.js';
import type { Tracing } from './tracing.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/**
 * How long a stop waits for the spans still buffered to reach the collector. One that answers
 * takes milliseconds; the exporter would go on retrying one that does not for its whole
 * OTEL_EXPORTER_OTLP_TIMEOUT (10 s, as long as SHUTDOWN_TIMEOUT_MS).
 */
const LAST_SPANS_MS = 3_000;

/** `sending`, or a rejection once `ms` have passed without it settling. */
async function sentWithin(sending: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the collector did not take them within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([sending, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An error the SDK hands over as JSON text (the OTLP exporter's failures: `{"message", "code",
 * "stack", …}`), as an Error, so the log line's `err` has its message and code as any other has.
 */
function errorIn(text: string): Error | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    return typeof parsed.message === 'string' ? Object.assign(new Error(parsed.message), parsed) : undefined;
  } catch {
    return undefined;
  }
}

/** The SDK's own complaints (a collector that cannot be reached) as warnings in the service's log. */
export function diagnostics(log: Logger): void {
  const to =
    (level: 'warn' | 'debug'): DiagLogFunction =>
    (message, ...args) => {
      const err = errorIn(message);
      if (err) log[level]({ err }, `OpenTelemetry: ${err.message}`);
      else log[level]({ otel: args.length ? args.map(String) : undefined }, `OpenTelemetry: ${message}`);
    };
  const warn = to('warn');
  const debug = to('debug');
  diag.setLogger({ error: warn, warn, info: debug, debug, verbose: debug }, { logLevel: DiagLogLevel.WARN });
}

/**
 * Starts the SDK, and answers the service's tracing (tracing.ts), which its caller hands on: spans go where OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT says, by the protocol,
 * sampler, batch, limit and resource variables the SDK reads. Only traces: the metrics stay
 * Prometheus's (`GET /metrics`), and the service writes its logs itself. Its service name is
 * `plant-store` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES name another.
 */
export function startTracing(log: Logger, options: Partial<NodeSDKConfiguration> = {}): Tracing {
  // OTEL_LOG_LEVEL sets the SDK's own console logger instead, as the SDK documents.
  if (!process.env.OTEL_LOG_LEVEL) diagnostics(log);
  const sdk = new NodeSDK({
    resource: defaultResource().merge(
      resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'plant-store', [ATTR_SERVICE_VERSION]: version }),
    ),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
    ...options,
  });
  sdk.start();
  return otelTracing(trace.getTracer('plant-store', version), async () => {
    try {
      await sentWithin(sdk.shutdown(), LAST_SPANS_MS);
    } catch (err) {
      // A collector gone at the stop costs its spans, not the stop: the server still stops cleanly.
      log.warn({ err }, 'OpenTelemetry: the last spans could not be sent');
    }
    // Unregistered, so that the process could start it again (the tests do, one app after another).
    for (const api of [trace, context, propagation, diag]) api.disable();
  });
}
