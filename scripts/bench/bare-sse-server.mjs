// The feed section's reference for idle streams: a bare node:http server that answers every
// request as the service answers a stream (bare-stream.mjs) and holds it open, with nothing else
// (no Fastify, no place, no fan-out). What its streams add to its resident memory is what
// node:http itself keeps for an open connection on this machine and Node.
import { createServer } from 'node:http';
import { holdAsStream } from './bare-stream.mjs';

const held = new Set();
const server = createServer((_req, res) => holdAsStream(res, held));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ msg: 'plant-store listening', url: `http://127.0.0.1:${server.address().port}` })}\n`,
  );
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
