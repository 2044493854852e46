// Stopping a server whose trace collector cannot be reached: the last spans cannot go out, which
// is worth a warning, not a failed stop. The server still logs "stopped" and exits 0, well within
// SHUTDOWN_TIMEOUT_MS (the exporter alone would retry for its 10 s). SQLite only: the store plays
// no part in it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { startServer, type ServerProcess } from '../support/server.js';

/** A port of 127.0.0.1 that nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

describe('traces, with the collector gone when the server stops', () => {
  let server: ServerProcess | undefined;
  after(() => server?.dispose());

  it('warns that the last spans were not sent, logs "stopped" and exits 0, without waiting for the exporter', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    // A batch delay longer than the test: the request's span is still buffered at the stop.
    server = await startServer({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '60000' } });
    const res = await fetch(`${server.url}/plants/1`, { headers: { authorization: `Bearer ${server.token}` } });
    assert.equal(res.status, 404);

    const closed = once(server.proc, 'close');
    const asked = Date.now();
    server.proc.kill('SIGTERM');
    const [code] = (await closed) as [number | null];
    const took = Date.now() - asked;
    const log = server.stdout.map(
      (l) => JSON.parse(l) as { level: number; msg: string; err?: { message?: string; code?: string } },
    );
    assert.equal(code, 0, server.stdout.join('\n'));
    assert.equal(log.at(-1)?.msg, 'stopped');
    assert.ok(took < 5_000, `the stop took ${took} ms`);
    const warning = log.find((l) => l.level === 40 && /^OpenTelemetry: .*spans/.test(l.msg));
    assert.ok(warning, `no warning about the spans in\n${server.stdout.join('\n')}`);
    assert.equal(log.filter((l) => l.level >= 50).length, 0, 'an error in the log');
  });
});
