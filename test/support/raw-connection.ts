// A connection the test drives byte by byte, to see what the server sends and when it closes.
import { connect, type Socket } from 'node:net';
import { rawResponse } from './http.js';

/** A raw connection: what the server sent, and whether (and when) it closed its side. */
export interface Conn {
  socket: Socket;
  data: () => string;
  /** Resolves when the server has ended the connection (FIN or reset), with the time it took. */
  ended: Promise<number>;
  /** Resolves once `text` has arrived. */
  waitFor(text: string, ms?: number): Promise<void>;
}

/** `halfOpen`: the client keeps its side open when the server closes its own (as a hostile client may). */
export function open(port: number, { halfOpen = false } = {}): Conn {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: halfOpen });
  let data = '';
  const started = Date.now();
  const waiters: (() => void)[] = [];
  socket.on('data', (d: Buffer) => {
    data += d.toString('latin1');
    for (const w of waiters.splice(0)) w();
  });
  socket.on('error', () => undefined);
  const ended = new Promise<number>((resolve) => {
    socket.once('end', () => resolve(Date.now() - started));
    socket.once('close', () => resolve(Date.now() - started));
  });
  return {
    socket,
    data: () => data,
    ended,
    waitFor(text, ms = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${JSON.stringify(text)} in ${ms} ms; got ${JSON.stringify(data)}`)),
          ms,
        );
        const check = () => {
          if (data.includes(text)) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}

/** The first final response in what a raw connection received (a 1xx before it is skipped). */
export function firstResponse(text: string) {
  const rest = text.replace(/^HTTP\/1\.1 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n/, '');
  const [head = '', ...bodyParts] = rest.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  const body = bodyParts.join('\r\n\r\n').slice(0, Number(headers['content-length'] ?? 0));
  return { ...rawResponse(Number(statusLine.split(' ')[1]), headers, body), headers };
}
