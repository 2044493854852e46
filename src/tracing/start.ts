import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Tracing } from './tracing.js';

/**
 * Traces are on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or its traces-only
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and OTEL_SDK_DISABLED is not true.
 */
export const tracesWanted = (c: Pick<Config, 'otlpEndpoint' | 'otlpTracesEndpoint' | 'otelSdkDisabled'>) =>
  (c.otlpEndpoint !== undefined || c.otlpTracesEndpoint !== undefined) && !c.otelSdkDisabled;

/** Starts OpenTelemetry when traces are wanted; otherwise loads none of it, and resolves to undefined. */
export async function startTracing(config: Config, log: Logger): Promise<Tracing | undefined> {
  if (!tracesWanted(config)) return undefined;
  const { startTracing: start } = await import('./sdk.js');
  return start(log);
}
