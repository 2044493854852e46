// What the server answers on a connection it will not serve: the request never reaches a
// handler, so the answer is written straight to the socket, in the Error shape, and the
// connection is closed for good (closeAfter) because what follows on it cannot be trusted.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { closeAfter } from '../connections/connections.js';
import { rawErrorResponse } from './error-body.js';

/**
 * Malformed requests rejected by Node's HTTP parser, and requests whose headers or whole request
 * took too long: 400, 431 or 408 (Node's own answers are bare statuses).
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'the request took too long to arrive']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'request headers are too large']
        : [400, 'malformed HTTP request'];
  closeAfter(socket, rawErrorResponse(status, message));
}

/** `CONNECT` (the server's 'connect' event): 501, this is not a proxy (Node would drop the connection). */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  closeAfter(socket, rawErrorResponse(501, 'CONNECT is not supported: this server is not a proxy'));
}
