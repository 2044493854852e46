// What one TCP connection may hold of the server: its pipelined requests are bounded, a refused
// or timed-out connection is closed for good, and a failure to accept one is not the process's
// end. Both listeners (the API port and METRICS_PORT) are guarded the same way.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { writeError } from '../errors/error-body.js';
import { requestId } from './request-id.js';

/**
 * Requests of one connection handled at once; what it pipelined past them waits, unread. One, as
 * nginx and Go's server do: its answers go out in order anyway, and each request handled at once
 * is a whole answer held in memory while the client is not reading (a page of 1,000 plants is
 * over a megabyte before it is sent).
 */
export const IN_PROCESS_PER_CONNECTION = 1;

/** How long a refused connection stays half closed for its client to read the answer. */
export const LINGER_MS = 1000;

/**
 * How long a connection past its pipelining limit has to read the answers before its 503; then it
 * is closed. Node has already made a request object of everything in the chunk it read, and holds
 * them until the connection ends: a client that never reads must not keep them.
 */
export const REFUSED_GRACE_MS = 5000;

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Answers that come late or never (a stream, a long poll): see `answersLate`. */
const lateAnswers = new WeakSet<ServerResponse>();
/**
 * What each guarded connection has in process and waiting. Module-wide, with the functions over
 * it, so that a connection costs its Pipeline and no closure: an idle stream keeps its connection
 * for hours, and the feed's budget is 10,000 of them.
 */
const pipelines = new WeakMap<Socket, Pipeline>();
/** Connections handed over from the server to a stream of their own (`letGo`): the guard no longer drains them. */
const handedOver = new WeakSet<Socket>();

/**
 * Marks an answer that comes late or never: a stream of changes, a long poll. While it is in
 * process the connection goes on being read, though requests wait behind it (at most
 * `maxPipelined` of them, then 503): a connection not read never shows its client leaving (TCP's
 * FIN and RST are read like data), and the stream or poll would keep its place for a client
 * gone until a heartbeat failed or the poll's wait ended.
 */
export function answersLate(res: ServerResponse): void {
  lateAnswers.add(res);
  const socket = res.socket as Socket | null;
  const p = socket && pipelines.get(socket);
  // Starts reading it again, unless it was refused (then nothing more of it is read).
  if (p && !p.refused) release(socket, p);
}

/**
 * Whether the connection of `res` carries it alone: nothing waits behind it, nothing was refused.
 * Only such a connection may be handed over from node:http (hand-over.ts).
 */
export function carriesOnly(res: ServerResponse): boolean {
  const socket = res.socket as Socket | null;
  const p = socket && pipelines.get(socket);
  return !!p && !p.refused && p.waiting.length === 0 && p.inProcess.size === 1 && p.inProcess.has(res);
}

/** The guard lets go of a connection handed over: its new owner ends it, at shutdown too. */
export function letGo(socket: Socket): void {
  pipelines.delete(socket);
  handedOver.add(socket);
}

/** Reading a held connection again: Node's server resumes on the socket's drain once its own answers are written. */
function release(socket: Socket, p: Pipeline): void {
  if (!p.held) return;
  p.held = false;
  socket.emit('drain');
}

export interface ConnectionLimits {
  /** Requests one connection may have read and not yet answered; past it, 503 and the connection closes. */
  maxPipelined: number;
  onRefused?: () => void;
  onAcceptError?: (err: Error) => void;
}

interface Pipeline {
  /** The answers being made (one at most): written and finished, or the connection ends. */
  inProcess: Set<ServerResponse>;
  waiting: [IncomingMessage, ServerResponse][];
  /** Past the limit: the 503 is on its way and nothing more of this connection is read or answered. */
  refused: boolean;
  held: boolean;
}

/**
 * Node's HTTP server hands every request of a chunk it reads to the handler at once: a client
 * that pipelines thousands of requests without reading the answers had each of them handled,
 * and their answers buffered, together (hundreds of MiB for a few connections). Here a
 * connection gets IN_PROCESS_PER_CONNECTION requests handled at a time; the rest wait, and while
 * any wait the connection is not read further (the flag and pause Node's own server uses when a
 * client stops reading its answers), so the client's next requests stay in TCP's buffers. Past
 * `maxPipelined` requests read and unanswered, the waiting ones and the one past the limit are
 * answered 503 at once, the last with `Connection: close` (RFC 9112 9.3.2: a client sends the
 * unanswered ones again on a new connection), and nothing more of the connection is handled.
 */
export function guardConnections(server: Server, limits: ConnectionLimits): { drain(): void } {
  const sockets = new Set<Socket>();
  let draining = false;
  function forget(this: Socket) {
    sockets.delete(this);
  }
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    // `on`, not `once` (a close comes once): once's wrapper would be one more object per connection.
    socket.on('close', forget);
  });
  const [handle, ...others] = server.listeners('request') as Listener[];
  if (!handle || others.length > 0) throw new Error('guardConnections expects the one request listener of the app');
  server.removeListener('request', handle);

  // Reading stops as Node's own server stops it for a client that does not read its answers:
  // the flag it checks, the socket paused, and the parser paused once it has finished the chunk
  // it is in (Node does that itself after a request handler set the flag; pausing the parser in
  // the middle of a chunk would make the rest of it a parse error).
  const hold = (socket: Socket, p: Pipeline, parsing: boolean) => {
    if (!p.refused && [...p.inProcess].some((res) => lateAnswers.has(res))) return release(socket, p);
    p.held = true;
    const s = socket as Socket & { _paused?: boolean; parser?: { pause(): void } | null };
    s._paused = true;
    socket.pause();
    if (!parsing) s.parser?.pause();
  };
  const run = (req: IncomingMessage, res: ServerResponse, p: Pipeline) => {
    p.inProcess.add(res);
    if (draining) res.shouldKeepAlive = false;
    // Closed when the answer is written to the socket (or the connection ends): only then is
    // the next waiting request handled, so a client that does not read holds IN_PROCESS answers.
    res.once('close', () => {
      p.inProcess.delete(res);
      const next = p.waiting.shift();
      if (next) run(next[0], next[1], p);
      // Node may have resumed reading on a drain meanwhile: hold again while any wait.
      if (p.waiting.length > 0 || p.refused) hold(req.socket, p, false);
      else release(req.socket, p);
      if (draining && p.inProcess.size === 0 && p.waiting.length === 0) closeAfter(req.socket, '');
    });
    handle(req, res);
  };
  const refuseAll = (req: IncomingMessage, res: ServerResponse, p: Pipeline) => {
    p.refused = true;
    hold(req.socket, p, true);
    limits.onRefused?.();
    // Answered in order after those in process: small, so they follow them out at once.
    for (const [waiting, itsResponse] of p.waiting.splice(0)) refuse(waiting, itsResponse, limits.maxPipelined, false);
    refuse(req, res, limits.maxPipelined, true);
    // After the last answer Node would destroy the socket while the client's requests are still
    // arriving, which resets it, and a reset drops what the kernel had not sent yet: answers the
    // client was about to read. It is ended instead (reading stays held), and destroyed once the
    // client has had REFUSED_GRACE_MS to read: then too if it reads nothing, since Node holds a
    // request object for everything of the chunk it read until the connection ends.
    const socket = req.socket as Socket & { destroySoon?: () => void };
    socket.destroySoon = () => socket.end();
    const timer = setTimeout(() => socket.destroy(), REFUSED_GRACE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (socket.destroyed) return;
    let p = pipelines.get(socket);
    if (!p) {
      p = { inProcess: new Set(), waiting: [], refused: false, held: false };
      pipelines.set(socket, p);
    }
    // After the refusal nothing more is read; what was in the same chunk is left unanswered.
    if (p.refused) return hold(socket, p, true);
    if (p.inProcess.size < IN_PROCESS_PER_CONNECTION && p.waiting.length === 0) return run(req, res, p);
    if (p.inProcess.size + p.waiting.length >= limits.maxPipelined) return refuseAll(req, res, p);
    p.waiting.push([req, res]);
    hold(socket, p, true);
  });

  // An accept that fails (out of descriptors, and libuv's reserve descriptor gone too) is
  // emitted on the listening server; unheard, it would end the process.
  server.once('listening', () => server.on('error', (err) => limits.onAcceptError?.(err)));

  return {
    /**
     * At shutdown, before the server stops listening: a connection with no request whose headers
     * have arrived (none yet, half its headers, or idle between requests) is closed now, since
     * Node stops timing such requests out once the server closes and it would hold the drain to
     * its time-out; the others finish the requests they sent (a body still arriving included),
     * their answers saying `Connection: close`, and are closed after them.
     */
    drain() {
      draining = true;
      for (const socket of sockets) {
        if (handedOver.has(socket)) continue;
        const p = pipelines.get(socket);
        const busy = p && (p.inProcess.size > 0 || p.waiting.length > 0);
        if (!busy) socket.destroy();
        else for (const res of p.inProcess) if (!res.headersSent) res.shouldKeepAlive = false;
      }
    },
  };
}

/** The 503 that takes the place of a request not handled (the Error shape, as everywhere). */
function refuse(req: IncomingMessage, res: ServerResponse, max: number, last: boolean): void {
  const message = `more than ${max} requests pipelined on one connection; send the rest on a new connection`;
  writeError(res, 503, message, {
    'x-request-id': requestId(req),
    'retry-after': '1',
    ...(last && { connection: 'close' }),
  });
}

/**
 * Answers a connection the server will not serve (a malformed or timed-out request, CONNECT) and
 * closes it for good: the answer and a FIN, then, once the client has had LINGER_MS to read it,
 * the descriptor. `end()` alone left the socket half open, and its descriptor held, for as long as
 * the client kept its side open, and a shutdown waited for every such socket.
 */
export function closeAfter(socket: Duplex, answer: string): void {
  socket.on('error', () => socket.destroy());
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
