// What an idle stream of the changes keeps in V8's heap, against what node:http itself keeps for an
// open response: PRODUCT.md §6 sizes an instance for 10,000 of them, open for hours, so every
// object a stream holds for its life counts ten thousand times. The same raw sockets open streams
// on the service (filtered by a tag nobody writes) and on a bare node:http server that answers them
// as the feed's bench reference does (scripts/bench/bare-stream.mjs). The service hands a stream's
// connection over from node:http once its head is written (http/connections/hand-over.ts), so it
// keeps less than node:http would: the socket, the place, the fan-out's record. SQLite only: the
// store plays no part once a stream is open.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { holdAsStream } from '../../scripts/bench/bare-stream.mjs';
import { useTestApp } from '../helper.js';
import { pollUntil } from '../support/poll.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const STREAMS = 400;
/**
 * Bytes of heap a stream may keep beyond what node:http keeps for an open response: none. Measured
 * here on Node 24, both with these raw clients in the same heap: 5.4 KB a stream against
 * node:http's 7.4 KB, so 2 KB below it; 9.2 KB (1.8 KB above it) while streams stayed with
 * node:http, and up to 1.2 KB more in a full run, whose other files leave work in the same heap.
 */
const OURS_AT_MOST = 0;

/** Opens `n` streams on `port` from raw sockets (the same client cost for both servers); resolves once each has its first bytes. */
async function openStreams(port: number, request: string): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < STREAMS; i += 50) {
    const batch = Array.from({ length: Math.min(50, STREAMS - i) }, async () => {
      const socket = connect(port, '127.0.0.1');
      socket.write(request);
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      assert.match(chunk.toString('latin1'), /^HTTP\/1\.1 200 /);
      return socket;
    });
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}

async function heapPerStream(port: number, request: string): Promise<number> {
  // The streams of the round before have closed; their sockets are let go of a turn or two later.
  await new Promise((r) => setTimeout(r, 500));
  const before = heapUsed();
  const sockets = await openStreams(port, request);
  const after = heapUsed();
  for (const s of sockets) s.destroy();
  return (after - before) / STREAMS;
}

describe('an idle stream of the changes (SQLite only: no store work)', () => {
  const t = useTestApp({ store: 'sqlite', env: { CHANGES_MAX_STREAMS: String(STREAMS * 3) } });

  it('keeps less heap than node:http keeps for an open response', async () => {
    const held = new Set<ServerResponse>();
    const bare = createServer((_req, res) => holdAsStream(res, held));
    bare.listen(0, '127.0.0.1');
    await once(bare, 'listening');
    const servicePort = Number(new URL(await t.app.listen()).port);
    const request =
      'GET /plants/changes?tag=never-written HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      `Authorization: Bearer ${t.app.token}\r\nAccept: text/event-stream\r\n\r\n`;
    try {
      // Each server once first, so that what a first stream compiles or caches is not counted.
      await heapPerStream((bare.address() as { port: number }).port, request);
      await heapPerStream(servicePort, request);
      const streamsOpen = async () => {
        const res = await t.app.inject({ path: '/metrics', headers: { authorization: `Bearer ${t.app.token}` } });
        return Number(/^plant_store_change_streams (\d+)$/m.exec(res.text)?.[1]);
      };
      assert.ok(await pollUntil(async () => (await streamsOpen()) === 0, 15_000), 'the first streams closed');
      const node = await heapPerStream((bare.address() as { port: number }).port, request);
      const service = await heapPerStream(servicePort, request);
      const ours = service - node;
      assert.ok(
        ours <= OURS_AT_MOST,
        `a stream keeps ${Math.round(service)} bytes, node:http ${Math.round(node)}: ${Math.round(ours)} are ours`,
      );
    } finally {
      bare.close();
      bare.closeAllConnections();
    }
  });
});
