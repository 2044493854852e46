// The spans of store transactions and of webhook deliveries, over OpenTelemetry's API: loaded
// only when traces are on (tracing/start.ts).
import {
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { Written } from '../domain/plant-write.js';
import { deliveryAttributes, deliveryResult } from './delivery-attributes.js';
import type { DatabaseSystem, DeliveryAttempt, Tracing, TraceContext } from './tracing.js';

/** The traces a batch of PostgreSQL writes gathered (postgres/batcher.ts), for the transaction it opens. */
const GATHERED = createContextKey('plant-store gathered traces');

/**
 * How many changes' traces are kept for their deliveries. A delivery of an older change (or one
 * that outlived a restart, or that another instance makes) starts a trace of its own.
 */
export const KEPT_CHANGES = 10_000;

/** `db.system`: older semantic conventions' name of `db.system.name`, which many backends still read. */
const ATTR_DB_SYSTEM = 'db.system';

/** The spans of the traced jobs, each once (one request may have queued several jobs). */
const distinct = (traces: readonly (TraceContext | undefined)[]): SpanContext[] => {
  const seen = new Map<string, SpanContext>();
  for (const t of traces) if (t && !seen.has(t.spanId)) seen.set(t.spanId, t as SpanContext);
  return [...seen.values()];
};

const failed = (span: ReturnType<Tracer['startSpan']>, error: unknown) => {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  span.setAttribute(ATTR_ERROR_TYPE, (error as { code?: string }).code ?? (error as Error).name ?? 'Error');
};

export function otelTracing(tracer: Tracer, shutdown: () => Promise<void>): Tracing {
  /** Each change's position, with the span of the request that made it; the oldest go first. */
  const changes = new Map<bigint, SpanContext>();
  const current = (): SpanContext | undefined => trace.getSpanContext(context.active());

  return {
    current,
    gathered: (traces, work) => context.with(context.active().setValue(GATHERED, traces), work),
    transaction(system: DatabaseSystem, traces?) {
      const given = traces ?? (context.active().getValue(GATHERED) as TraceContext[] | undefined) ?? [current()];
      const [parent, ...others] = distinct(given);
      if (parent === undefined) return undefined;
      const span = tracer.startSpan(
        system,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_DB_SYSTEM_NAME]: system,
            [ATTR_DB_SYSTEM]: system,
            'plant_store.transaction.jobs': given.length,
          },
          links: others.map((c) => ({ context: c })),
        },
        trace.setSpanContext(ROOT_CONTEXT, parent),
      );
      return {
        end(error) {
          if (error !== undefined) failed(span, error);
          span.end();
        },
      };
    },
    changed(written: Written | readonly Written[]) {
      const request = current();
      if (request === undefined) return;
      for (const w of ([] as Written[]).concat(written)) {
        if (w.kind !== 'created' && w.kind !== 'updated' && w.kind !== 'deleted') continue;
        changes.set(w.position, request);
        if (changes.size > KEPT_CHANGES) changes.delete(changes.keys().next().value!);
      }
    },
    delivery(attempt: DeliveryAttempt) {
      const request = changes.get(attempt.eventSeq);
      const parent = request ? trace.setSpanContext(ROOT_CONTEXT, request) : ROOT_CONTEXT;
      const span = tracer.startSpan('POST', { kind: SpanKind.CLIENT, attributes: deliveryAttributes(attempt) }, parent);
      const headers: Record<string, string> = {};
      propagation.inject(trace.setSpan(parent, span), headers);
      return {
        headers,
        end(result) {
          const problem = deliveryResult(span, result);
          if (problem !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: problem });
          span.end();
        },
      };
    },
    shutdown,
  };
}
