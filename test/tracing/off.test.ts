// Traces off, the default: no module of OpenTelemetry is loaded, a caller's traceparent goes no
// further, and neither log lines nor webhook deliveries carry a trace. Seen from outside the
// built server, which a preloaded hook makes say each OpenTelemetry module it resolves.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../support/cli.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { pollUntil } from '../support/poll.js';
import { FAST_WEBHOOKS, Receiver } from '../support/receiver.js';
import { startServer } from '../support/server.js';
import { createMigratedTestStore } from '../support/stores.js';

const LOADS = new URL('../support/otel-loads.mjs', import.meta.url).href;
const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A server on a fresh store with one webhook endpoint; one traced write through it, delivered. */
async function writeThrough(env: Record<string, string>) {
  const hook = await new Receiver().start();
  cleanups.push(() => hook.close());
  const store = await createMigratedTestStore('sqlite');
  cleanups.push(() => store.drop());
  const added = await cli(['webhook', 'add', hook.url], { DATABASE_URL: store.databaseUrl, ...FAST_WEBHOOKS });
  assert.equal(added.status, 0, added.stderr);
  const server = await startServer({
    databaseUrl: store.databaseUrl,
    env: { ...FAST_WEBHOOKS, NODE_OPTIONS: `--import=${LOADS}`, ...env },
  });
  cleanups.push(() => server.dispose());
  const res = await fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.token}`,
      'content-type': 'application/json',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    },
    body: '{"id":1,"name":"Fern"}',
  });
  assert.equal(res.status, 200);
  assert.ok(await pollUntil(async () => hook.requests.length > 0, 10_000), 'delivered');
  // prom-client loads OpenTelemetry's API (for exemplars), as it did before traces: the rest, none.
  const loaded = server.stderr.filter((l) => l.startsWith('otel module:') && !l.includes('/@opentelemetry/api/'));
  const line = server.stdout.map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.msg === 'request');
  return { loaded, line: line!, delivery: hook.requests[0]! };
}

describe('traces off', () => {
  it('loads no module of OpenTelemetry (but the API prom-client loads), and neither the log nor a delivery carries a trace', async () => {
    const { loaded, line, delivery } = await writeThrough({});
    assert.deepEqual(loaded, []);
    assert.equal(line.traceId, undefined);
    assert.equal(delivery.headers.traceparent, undefined);
  });

  it('stays off with OTEL_SDK_DISABLED=true, whatever endpoint is set; the hook sees OpenTelemetry when on', async () => {
    const otlp = await new OtlpReceiver().start();
    cleanups.push(() => otlp.close());
    const disabled = await writeThrough({ ...otlp.env(), OTEL_SDK_DISABLED: 'true' });
    assert.deepEqual(disabled.loaded, []);
    assert.equal(disabled.delivery.headers.traceparent, undefined);
    // The same server with traces on: the hook does see the modules, and spans come.
    const on = await writeThrough(otlp.env());
    assert.ok(
      on.loaded.some((l) => l.includes('/@opentelemetry/sdk-node/')),
      on.loaded.join('\n'),
    );
    assert.equal(on.line.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    await otlp.span('request', (s) => s.name === 'POST /plants');
  });
});
