// Writes of several requests that share one store transaction (the SQLite writer's turn, a
// PostgreSQL batch): the transaction's one span is a child of the first request's span and links
// to the others', so every request's trace leads to it. In this process, with OpenTelemetry
// started as `serve` starts it, exporting to a receiver on 127.0.0.1; stopped again after.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { plantRecord } from '../../src/domain/plant.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { startTracing } from '../../src/tracing/start.js';
import type { Tracing } from '../../src/tracing/tracing.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

for (const kind of stores) {
  describe(`a transaction shared by several requests' writes on ${kind}`, suiteOptions(kind), () => {
    const system = kind === 'sqlite' ? 'sqlite' : 'postgresql';
    let otlp: OtlpReceiver;
    let started: Tracing | undefined;
    let testStore: TestStore;
    let store: Store | undefined;
    const saved: Record<string, string | undefined> = {};

    before(async () => {
      otlp = await new OtlpReceiver().start();
      // The SDK reads the process's environment, as it does under `serve`.
      for (const [k, v] of Object.entries(otlp.env())) {
        saved[k] = process.env[k];
        process.env[k] = v;
      }
      testStore = createTestStore(kind);
      const config = loadConfig({ DATABASE_URL: testStore.databaseUrl, ...otlp.env() });
      started = await startTracing(config, pino({ level: 'silent' }));
      store = (await openStore(config, { tracing: started })).store;
    });
    after(async () => {
      await store?.close();
      await started?.shutdown();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await testStore?.drop();
      await otlp?.close();
    });

    it('is one span, in the trace of the first request, linked to the others', async () => {
      assert.ok(started, 'traces are on');
      const tracer = trace.getTracer('test');
      const requests = [1, 2, 3].map((i) => tracer.startSpan(`request ${i}`));
      // Written in the same turn of the event loop: one transaction carries the three.
      const written = await Promise.all(
        requests.map((span, i) =>
          context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
            store!.plants.write({ kind: 'create', plant: plantRecord(BigInt(i + 1), 'Fern', undefined) }),
          ),
        ),
      );
      assert.deepEqual(
        written.map((w) => w.kind),
        ['created', 'created', 'created'],
      );
      for (const span of requests) span.end();
      const [first, ...others] = requests.map((s) => s.spanContext());
      const tx = await otlp.span('transaction', (s) => s.name === system);
      assert.equal(otlp.spans.filter((s) => s.name === system).length, 1, 'one transaction');
      assert.equal(tx.traceId, first!.traceId);
      assert.equal(tx.parentSpanId, first!.spanId);
      assert.deepEqual(
        tx.links,
        others.map((c) => ({ traceId: c.traceId, spanId: c.spanId })),
      );
      assert.equal(tx.attributes['plant_store.transaction.jobs'], 3);
    });

    it('is no error when a batch is refused (rolled back as asked); a transaction the database fails is', async () => {
      const tracer = trace.getTracer('test');
      const inSpan = <T>(name: string, work: () => Promise<T>) => {
        const span = tracer.startSpan(name);
        return context.with(trace.setSpan(ROOT_CONTEXT, span), work).finally(() => span.end());
      };
      // Plant 1 exists: creating it again with another name is a conflict, and the batch applies nothing.
      const refused = inSpan('refused batch', () =>
        store!.plants.writeBatch([{ kind: 'create', plant: plantRecord(1n, 'Ivy', undefined) }]),
      );
      await assert.rejects(refused, { name: 'WritesRefused' });
      const parent = await otlp.span('refused batch', (s) => s.name === 'refused batch');
      const rolledBack = await otlp.span('its transaction', (s) => s.parentSpanId === parent.spanId);
      assert.equal(rolledBack.status.code ?? 0, 0, 'unset: not an error');
      if (kind === 'sqlite') return;
      // PostgreSQL refuses a NUL in text: the transaction fails (the API's validation never lets one through).
      await assert.rejects(
        inSpan('failed write', () =>
          store!.plants.writeBatch([{ kind: 'create', plant: plantRecord(9n, 'a\u0000b', undefined) }]),
        ),
      );
      const failedParent = await otlp.span('failed write', (s) => s.name === 'failed write');
      const failed = await otlp.span('its transaction', (s) => s.parentSpanId === failedParent.spanId);
      assert.equal(failed.status.code, 2, 'error');
      assert.ok(failed.attributes['error.type'], 'error.type');
    });
  });
}
