// Traces, as an operator turns them on: the built server with OTEL_EXPORTER_OTLP_ENDPOINT set
// sends its spans over OTLP/HTTP (JSON) to a receiver this test runs on 127.0.0.1, on both
// stores: a request's server span, its store transaction and its webhook delivery, in one trace
// whose id is in the request's log line and in the delivery's traceparent.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../support/cli.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { FAST_WEBHOOKS, Receiver } from '../support/receiver.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { createMigratedTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

const SERVER = 2;
const CLIENT = 3;

/** The log lines of requests, parsed. */
const requestLines = (server: ServerProcess) =>
  server.stdout.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.msg === 'request');

for (const kind of stores) {
  describe(`traces on ${kind}`, suiteOptions(kind), () => {
    const system = kind === 'sqlite' ? 'sqlite' : 'postgresql';
    let otlp: OtlpReceiver;
    let hook: Receiver;
    let server: ServerProcess;
    const post = (id: number, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ id, name: 'Fern' }),
      });
    /** The spans of one trace, once its webhook delivery's span has come and a moment more has passed. */
    const traceOf = async (traceId: string): Promise<ReceivedSpan[]> => {
      await otlp.span('delivery', (s) => s.traceId === traceId && s.kind === CLIENT && s.name === 'POST');
      // Anything else that joined the trace (it must not: the dispatcher's own transactions) comes by now.
      await new Promise((r) => setTimeout(r, 300));
      return otlp.spans.filter((s) => s.traceId === traceId);
    };

    let store: TestStore;

    before(async () => {
      otlp = await new OtlpReceiver().start();
      hook = await new Receiver().start();
      store = await createMigratedTestStore(kind);
      const added = await cli(['webhook', 'add', hook.url], { DATABASE_URL: store.databaseUrl, ...FAST_WEBHOOKS });
      assert.equal(added.status, 0, added.stderr);
      server = await startServer({ databaseUrl: store.databaseUrl, env: { ...FAST_WEBHOOKS, ...otlp.env() } });
    });
    after(async () => {
      await server?.dispose();
      await store?.drop();
      await hook?.close();
      await otlp?.close();
    });

    it('exports the request, its store transaction and its webhook delivery in one trace, whose id the log line has', async () => {
      assert.equal((await post(1)).status, 200);
      const request = await otlp.span(
        'request',
        (s) => s.kind === SERVER && s.name === 'POST /plants' && s.attributes['url.path'] === '/plants',
      );
      assert.equal(request.parentSpanId, '', 'a request without traceparent starts a trace');
      assert.deepEqual(
        {
          method: request.attributes['http.request.method'],
          route: request.attributes['http.route'],
          status: request.attributes['http.response.status_code'],
          scheme: request.attributes['url.scheme'],
        },
        { method: 'POST', route: '/plants', status: 200, scheme: 'http' },
      );
      assert.equal(request.resource['service.name'], 'plant-store');

      const spans = await traceOf(request.traceId);
      const transactions = spans.filter((s) => s.name === system);
      assert.equal(transactions.length, 1, `one transaction in the trace: ${spans.map((s) => s.name).join(', ')}`);
      const [tx] = transactions;
      assert.equal(tx!.parentSpanId, request.spanId, 'the transaction is the request’s');
      assert.equal(tx!.kind, CLIENT);
      assert.equal(tx!.attributes['db.system.name'], system);
      assert.equal(tx!.attributes['db.system'], system);

      const delivery = spans.find((s) => s.name === 'POST' && s.kind === CLIENT)!;
      assert.equal(
        delivery.parentSpanId,
        request.spanId,
        'the delivery is in the trace of the request that made the change',
      );
      assert.equal(delivery.attributes['http.request.method'], 'POST');
      assert.equal(delivery.attributes['http.response.status_code'], 200);
      assert.equal(delivery.attributes['url.full'], hook.url);
      assert.equal(
        spans.length,
        3,
        `the trace holds the request, its transaction, its delivery: ${spans.map((s) => s.name).join(', ')}`,
      );

      // The receiver can continue the trace: the delivery's own span is its parent.
      const sent = hook.requests.find((r) => r.body.includes('"id":1'))!;
      assert.equal(sent.headers.traceparent, `00-${request.traceId}-${delivery.spanId}-01`);

      const lines = requestLines(server);
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.traceId, request.traceId);
      assert.equal(lines[0]!.spanId, request.spanId);
    });

    it('names a request by the path template of the document, as the metrics label it', async () => {
      const res = await fetch(`${server.url}/plants/1`, { headers: { authorization: `Bearer ${server.token}` } });
      assert.equal(res.status, 200);
      const span = await otlp.span('read', (s) => s.kind === SERVER && s.attributes['url.path'] === '/plants/1');
      assert.equal(span.name, 'GET /plants/{id}');
      assert.equal(span.attributes['http.route'], '/plants/{id}');
    });

    it('names a request no route matched by its method alone, and keeps a credential in its path out', async () => {
      const res = await fetch(`${server.url}/nope/pst_${'a'.repeat(43)}`, {
        headers: { authorization: `Bearer ${server.token}` },
      });
      assert.equal(res.status, 404);
      const span = await otlp.span(
        'unrouted request',
        (s) => s.kind === SERVER && String(s.attributes['url.path']).startsWith('/nope/'),
      );
      assert.equal(span.name, 'GET');
      assert.equal(span.attributes['url.path'], '/nope/[redacted]');
      assert.equal(span.attributes['http.route'], undefined);
      assert.equal(span.attributes['http.response.status_code'], 404);
    });

    it('continues the trace of an incoming traceparent, its tracestate carried to the delivery', async () => {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const parent = '00f067aa0ba902b7';
      const res = await post(2, { traceparent: `00-${traceId}-${parent}-01`, tracestate: 'congo=t61rcWkgMzE' });
      assert.equal(res.status, 200);
      const request = await otlp.span('request', (s) => s.kind === SERVER && s.traceId === traceId);
      assert.equal(request.parentSpanId, parent, 'the caller’s span is the parent');
      assert.equal(request.traceState, 'congo=t61rcWkgMzE');
      const spans = await traceOf(traceId);
      assert.deepEqual(spans.map((s) => s.name).sort(), ['POST', 'POST /plants', system].sort());
      const sent = hook.requests.find((r) => r.body.includes('"id":2'))!;
      assert.match(sent.headers.traceparent!, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      assert.equal(sent.headers.tracestate, 'congo=t61rcWkgMzE');
      assert.ok(requestLines(server).some((l) => l.traceId === traceId && l.spanId === request.spanId));
    });
  });
}
