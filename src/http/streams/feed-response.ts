import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Client, Sink } from '../../feed/index.js';
import { answersLate, closeAfter } from '../connections/connections.js';
import { handOver, mayHandOver } from '../connections/hand-over.js';

/** The first bytes of a stream: a reader that loses it comes back after a second (a browser waits 3 s by default). */
export const SSE_PREAMBLE = ': following the changes\nretry: 1000\n\n';
/** The end of a chunked body (RFC 9112 7.1). */
const LAST_CHUNK = '0\r\n\r\n';

/**
 * A handed-over connection closes when its client ends its side, or sends anything on it (an
 * EventSource never does: it asks again on a new connection): nothing it sends there is read, so
 * none of it may wait.
 */
function closeIt(this: Socket): void {
  this.destroy();
}
/** Its close follows, and says the rest. */
function ignore(): void {}

/**
 * A request of the feed as the fan-out sees it: the client a place is held for, and the sink its
 * stream writes to. One object with its methods on the prototype rather than closures: an idle
 * stream holds it for hours, and 10,000 of them are the feed's budget (docs/performance.md). A
 * stream whose connection carries nothing else is handed over from node:http once its head is
 * written (connections/hand-over.ts): from then on it holds the socket alone and writes its own chunks.
 */
export class FeedResponse implements Client, Sink {
  private req: IncomingMessage | undefined;
  private res: ServerResponse | undefined;
  /** The connection, once handed over. */
  private socket: Socket | undefined;
  /** Whether the handed-over stream is a chunked body (HTTP/1.1) or runs to the connection's end. */
  private chunked = false;
  private leave: (() => void) | undefined;

  constructor(req: IncomingMessage, res: ServerResponse) {
    this.req = req;
    this.res = res;
  }

  /** The response's close covers a request answered or a socket closed once it owns it. */
  get gone(): boolean {
    if (this.socket) return this.socket.destroyed;
    return this.res!.destroyed || this.req!.socket.destroyed;
  }

  /**
   * A client that leaves while its request waits is noticed by the socket's close, never by a
   * write: a filtered stream may never be written to. The socket's close covers a request queued
   * behind another on the same connection.
   */
  onLeave(leave: () => void): () => void {
    this.leave = leave;
    // `on`, not `once`: each closes once, `leave` may be called twice, and once's wrappers would
    // be two more objects an idle stream keeps.
    this.res!.on('close', leave);
    this.req!.socket.on('close', leave);
    // Its connection is read while it waits, though requests wait behind it: else the client's
    // leaving would not be seen.
    answersLate(this.res!);
    return this.stopListening;
  }

  private readonly stopListening = (): void => {
    const { leave } = this;
    if (!leave) return;
    this.res?.off('close', leave);
    (this.socket ?? this.req!.socket).off('close', leave);
  };

  /**
   * Writes the stream's head and preamble; a connection that carries this stream alone is then
   * handed over, and says `Connection: close`, since no other request will be read from it.
   */
  begin(headers: OutgoingHttpHeaders): void {
    const req = this.req!;
    const res = this.res!;
    const own = mayHandOver(req, res);
    res.writeHead(200, own ? { ...headers, connection: 'close' } : headers);
    res.write(SSE_PREAMBLE);
    if (!own) return;
    this.chunked = res.chunkedEncoding;
    if (this.leave) res.off('close', this.leave);
    const socket = handOver(req, res);
    this.socket = socket;
    this.req = undefined;
    this.res = undefined;
    socket.on('error', ignore);
    socket.on('end', closeIt);
    socket.on('data', closeIt);
    socket.resume();
  }

  write(text: string): boolean {
    const { socket } = this;
    if (!socket) return this.res!.write(text);
    return socket.write(this.chunked ? `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n` : text);
  }

  get buffered(): number {
    return (this.socket ?? this.res!).writableLength;
  }

  drained(): Promise<void> {
    const target = this.socket ?? this.res!;
    return new Promise((resolve) => {
      const done = () => {
        target.off('drain', done);
        target.off('close', done);
        resolve();
      };
      target.once('drain', done);
      target.once('close', done);
    });
  }

  close(now: boolean): void {
    const { socket } = this;
    if (!socket) {
      if (now) this.res!.destroy();
      else this.res!.end();
    } else if (now) socket.destroy();
    // The last chunk and a FIN; the descriptor goes once the client has had a moment to read them,
    // whatever it does (a shutdown does not wait for a reader that stopped reading).
    else closeAfter(socket, this.chunked ? LAST_CHUNK : '');
  }
}
