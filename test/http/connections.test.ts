// What one connection may hold of the server, on a real socket: a refused or timed-out connection
// is closed for good (its descriptor freed, not left half open for as long as the client likes);
// pipelined requests are bounded per connection; a failed accept does not end the process.
// SQLite only: the store plays no part.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { LINGER_MS } from '../../src/http/connections/connections.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { assertConforms, rawResponse } from '../support/http.js';
import { open, type Conn } from '../support/raw-connection.js';

/**
 * Connected sockets of the server listening on `port` that a process still holds: the kernel's
 * table lists them with the inode of their descriptor, which is 0 once the descriptor is closed
 * (a socket in FIN-WAIT-2 that no process holds is the kernel's to time out).
 */
function heldSockets(port: number, clients?: readonly number[]): number {
  const hex = (p: number) => `:${p.toString(16).toUpperCase().padStart(4, '0')}`;
  // Only the sockets of these clients (by their ports), when given: cases running at once each count their own.
  const theirs = clients && new Set(clients.map(hex));
  let held = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const f = row.trim().split(/\s+/);
      const [local, remote, state, inode] = [f[1]!, f[2]!, f[3]!, f[9]!];
      if (theirs && !theirs.has(remote.slice(remote.lastIndexOf(':')))) continue;
      if (local.endsWith(hex(port)) && state !== '0A' && inode !== '0') held++;
    }
  }
  return held;
}

/** What `measure` gives once it has settled to `n`, or after `ms`. */
async function settle(measure: () => number, n: number, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  while (measure() !== n && Date.now() < deadline) await sleep(50);
  return measure();
}

/** The statuses and request ids of the answers in `text`, in order. */
function answers(text: string): { status: number; id: string }[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3})[^]*?x-request-id: ([^\r]*)\r\n/gi)].map((m) => ({
    status: Number(m[1]),
    id: m[2]!,
  }));
}

describe('connections (SQLite only: the store plays no part)', () => {
  let server: TestApp;
  let port: number;
  let metricsPort: number;
  const clients: Conn[] = [];
  const client = (p: number, halfOpen = false) => {
    const c = open(p, { halfOpen });
    clients.push(c);
    return c;
  };
  before(async () => {
    server = await buildTestApp({
      logs: true,
      env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', MAX_PIPELINED_REQUESTS: '16' },
    });
    port = Number(new URL(await server.listen()).port);
    metricsPort = Number(new URL(server.app.metricsListener!.url).port);
  });
  after(async () => {
    for (const c of clients) c.socket.destroy();
    await server?.close();
  });

  // Its cases run at once: each waits LINGER_MS for the server to close its sockets, and counts
  // those the server still holds of its own clients.
  describe(
    'a refused or timed-out connection is closed, though its client keeps its side open',
    { concurrency: true },
    () => {
      /** 20 clients send `bytes`, read the error, keep their side open: the server's sockets must go. */
      async function refusedAndClosed(p: number, bytes: string) {
        const refused = Array.from({ length: 20 }, () => client(p, true));
        for (const c of refused) c.socket.write(bytes);
        for (const c of refused) await c.waitFor('\r\n\r\n{"error":');
        const ports = refused.map((c) => c.socket.localPort!);
        // Closed, not merely ended: an end kept each descriptor, half open, for as long as the client
        // liked, and a shutdown waited for them.
        assert.equal(
          await settle(() => heldSockets(p, ports), 0, LINGER_MS + 3000),
          0,
          'sockets the server still holds',
        );
        for (const c of refused) c.socket.destroy();
      }

      for (const [what, bytes] of [
        ['a malformed request: 400', 'GARBAGE\r\n\r\n'],
        ['headers too large: 431', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
        ['CONNECT: 501', 'CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n'],
      ] as const) {
        it(`${what}, on the API port`, () => refusedAndClosed(port, bytes));
        it(`${what}, on the METRICS_PORT listener`, () => refusedAndClosed(metricsPort, bytes));
      }

      it('headers that never end: 408, on both listeners', async () => {
        // Its own app: a short HEADERS_TIMEOUT_MS would also end the other cases' sockets by itself.
        const slow = await buildTestApp({
          env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', HEADERS_TIMEOUT_MS: '300' },
        });
        try {
          const bytes = 'GET /healthz HTTP/1.1\r\nHost: x\r\n';
          const apiPort = Number(new URL(await slow.listen()).port);
          await Promise.all(
            [apiPort, Number(new URL(slow.app.metricsListener!.url).port)].map((p) => refusedAndClosed(p, bytes)),
          );
        } finally {
          await slow.close();
        }
      });
    },
  );

  describe('pipelined requests are bounded per connection', () => {
    const get = (id: string) => `GET /healthz HTTP/1.1\r\nHost: x\r\nx-request-id: ${id}\r\n\r\n`;

    it('up to MAX_PIPELINED_REQUESTS: every answer, in order, and the connection stays', async () => {
      const c = client(port);
      const ids = Array.from({ length: 16 }, (_, i) => `within-${i}`);
      c.socket.write(ids.map(get).join(''));
      await c.waitFor('within-15');
      await sleep(100);
      assert.deepEqual(
        answers(c.data()),
        ids.map((id) => ({ status: 200, id })),
      );
      c.socket.write(get('after'));
      await c.waitFor('x-request-id: after');
    });

    it('past it: the one in hand answered, those waiting and the one past it 503 (Error shape), then the end', async () => {
      const c = client(port);
      const ids = Array.from({ length: 40 }, (_, i) => `past-${i}`);
      c.socket.write(ids.map(get).join(''));
      await c.ended;
      // One request is handled at a time: the first, while 15 wait; the 17th is past the limit.
      assert.deepEqual(answers(c.data()), [
        { status: 200, id: 'past-0' },
        ...ids.slice(1, 17).map((id) => ({ status: 503, id })),
      ]);
      const last = c.data().lastIndexOf('HTTP/1.1 503');
      const refusal = c.data().slice(last);
      assert.match(refusal, /\r\nconnection: close\r\n/i);
      assert.doesNotMatch(c.data().slice(0, last), /\r\nconnection: close\r\n/i, 'only the last 503 closes');
      assert.match(refusal, /\r\nretry-after: 1\r\n/i);
      assert.match(refusal, /\{"error":503,"message":"more than 16 requests pipelined on one connection; [^"]+"\}$/);
      const [head = '', body = ''] = refusal.split('\r\n\r\n');
      const headers = Object.fromEntries(
        head
          .split('\r\n')
          .slice(1)
          .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      assertConforms('GET', '/healthz', rawResponse(503, headers, body));
      const metrics = await server.inject({ path: '/metrics', headers: { authorization: `Bearer ${server.token}` } });
      assert.match(metrics.text, /plant_store_overload_rejections_total\{reason="pipelining"\} [1-9]/);
    });

    it('a client that never reads its answers is no longer read: its requests wait in TCP, not in the server', async () => {
      let parsed = 0;
      const count = () => void parsed++;
      server.app.server.on('request', count);
      const c = client(port);
      c.socket.pause();
      // 100,000 requests, more than the kernel's buffers on both sides hold: the rest waits in the
      // client's own.
      const written = 100_000;
      const chunk = Buffer.from(get('flood').repeat(1000));
      for (let i = 0; i < written / 1000; i++) c.socket.write(chunk);
      await sleep(1000);
      server.app.server.removeListener('request', count);
      // One read of the socket (64 KiB, some 1,100 of these requests) is parsed at a time.
      assert.ok(parsed < 4000, `the server parsed ${parsed} of the ${written} requests written`);
      c.socket.destroy();
    });
  });

  it('a failed accept is logged, and the process goes on', async () => {
    const err = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' });
    server.app.server.emit('error', err);
    assert.ok(server.logs.some((l) => l.includes('could not accept a connection') && l.includes('EMFILE')));
    const c = client(port);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.waitFor('{"status":"ok"}');
  });
});
