// A stream of the changes may stay open for hours, and an instance holds 10,000 of them
// (PRODUCT.md §6). node:http keeps about 15 KB for each open response on this machine (its parser,
// the request and response objects, Fastify's request and reply, their listeners); a bare socket
// keeps under 4 KB. So once a stream's head is written, its connection is handed over from
// node:http as Node hands over an upgraded one (the WebSocket servers' path): Node's listeners and
// parser go, the response is complete as far as the server knows (its log line, metrics and span
// end there), and the stream writes its own chunks to the socket until it ends the connection.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { carriesOnly, letGo } from './connections.js';

type FreeParser = (parser: unknown, req: IncomingMessage, socket: Socket) => void;

/**
 * Node's `freeParser`, with which its server lets go of an upgraded connection's parser (the
 * parser leaves the server's timeout list and goes back to its pool). `_http_common` is Node's own
 * module, the same on Node 20, 22 and 24; without it, streams stay with node:http.
 */
const freeParser = (() => {
  try {
    const common = createRequire(import.meta.url)('_http_common') as { freeParser?: FreeParser };
    return typeof common.freeParser === 'function' ? common.freeParser : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * The listeners node:http's server puts on a connection it serves (lib/_http_server.js), by name:
 * the same on Node 20, 22 and 24 (test/http/hand-over.test.ts checks none is left). They are the
 * ones Node removes itself when it hands over an upgraded connection.
 */
const NODE_LISTENERS = new Set([
  'bound socketOnData',
  'bound socketOnEnd',
  'bound socketOnClose',
  'bound socketOnDrain',
  'socketOnError',
  'socketOnTimeout',
  'onSocketResume',
  'onSocketPause',
]);
const EVENTS = ['data', 'end', 'close', 'drain', 'error', 'timeout', 'resume', 'pause'];

/** Whether `res`'s connection may be handed over once its head is written: it carries `res` alone. */
export function mayHandOver(req: IncomingMessage, res: ServerResponse): boolean {
  const socket = res.socket as (Socket & { parser?: unknown }) | null;
  return !!freeParser && !!socket?.parser && !socket.destroyed && req.complete && carriesOnly(res);
}

/**
 * Takes `res`'s connection from node:http, its head and first bytes written (`mayHandOver` said
 * so): resolves `res` as finished for the server (its 'finish', which Fastify's completion hooks
 * hear), and returns the socket, nothing of Node's server listening to it any more. The caller
 * reads it (to see its client leave) and ends it.
 */
export function handOver(req: IncomingMessage, res: ServerResponse): Socket {
  const socket = res.socket as Socket & { parser?: unknown };
  for (const event of EVENTS) {
    for (const listener of socket.listeners(event) as ((...args: unknown[]) => void)[]) {
      if (NODE_LISTENERS.has(listener.name)) socket.removeListener(event, listener);
    }
  }
  socket.setTimeout(0);
  freeParser!(socket.parser, req, socket);
  res.detachSocket(socket);
  letGo(socket);
  // Node's own 'finish' listener would end the connection or read the next request: gone too.
  for (const listener of res.listeners('finish') as ((...args: unknown[]) => void)[]) {
    if (listener.name === 'bound resOnFinish') res.removeListener('finish', listener);
  }
  res.emit('finish');
  return socket;
}
