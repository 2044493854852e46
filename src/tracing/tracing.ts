// Where the service meets OpenTelemetry, without loading it. Traces are off unless an OTLP
// endpoint is set (tracing/start.ts); then tracing/spans.ts, loaded at start, makes a `Tracing`.
// Whoever builds the SQLite writer, the PostgreSQL pool and batcher and the webhook dispatcher
// hands it to them (services.ts, through openStore), and the plant use-cases are given it by
// their caller; each asks `tracing?.…`, so with traces off each costs one check of an unset
// field. Nothing here imports OpenTelemetry, and nothing here is a variable of the process.
import type { Written } from '../domain/plant-write.js';

/** Where work stands in a trace (OpenTelemetry's span context), as a job carries it to a later transaction. */
export type TraceContext = { readonly traceId: string; readonly spanId: string };

/** The span of one store transaction, ended once the transaction is (durably) committed or has failed. */
export interface TransactionSpan {
  end(error?: unknown): void;
}

/** A webhook delivery's span: the headers that carry it to the receiver (`traceparent`, `tracestate`). */
export interface DeliverySpan {
  headers: Record<string, string>;
  end(result: { status: number | null; error: string | null }): void;
}

/** What a delivery span says of its delivery. */
export interface DeliveryAttempt {
  /** The change's position: it finds the trace of the request that made the change. */
  eventSeq: bigint;
  /** Its `webhook-id`. */
  eventId: string;
  endpointId: string;
  url: string;
  /** Attempts made before this one. */
  attempts: number;
}

export type DatabaseSystem = 'sqlite' | 'postgresql';

export interface Tracing {
  /** The trace of the work under way (a request's), for a job queued for a later transaction; undefined outside one. */
  current(): TraceContext | undefined;
  /** Runs `work` as these traces' work: a transaction it opens is theirs (PostgreSQL's batches of writes). */
  gathered<T>(traces: readonly (TraceContext | undefined)[], work: () => T): T;
  /**
   * A store transaction's span, child of the first traced job's and linked to the other traced
   * jobs' (writes of several requests share a transaction); undefined when no job is traced.
   * Without `traces`: the gathered traces, or the work under way's.
   */
  transaction(system: DatabaseSystem, traces?: readonly (TraceContext | undefined)[]): TransactionSpan | undefined;
  /** The changes these writes made belong to the trace under way: their webhook deliveries carry it. */
  changed(written: Written | readonly Written[]): void;
  /** One delivery attempt's span, in the trace of the request that made its change when this process knows it. */
  delivery(attempt: DeliveryAttempt): DeliverySpan;
  /** Sends the spans still buffered and stops. */
  shutdown(): Promise<void>;
}
