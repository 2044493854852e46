import { randomUUID } from 'node:crypto';

// node:http is taken with process.getBuiltinModule, not an ESM import: an ESM import builds a
// facade that reads every export, and Node 24's lazy WebSocket export then loads undici (the
// engine of fetch) at every start, some 40 ms of it (docs/performance.md, start-up). Types come
// from `import type`, which compiles to nothing.
const { STATUS_CODES } = process.getBuiltinModule('node:http');

/** The bytes of a whole response written straight to a socket: the Error shape, then the connection closes. */
export function rawErrorResponse(status: number, message: string): string {
  const body = JSON.stringify({ error: status, message });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nx-request-id: ${randomUUID()}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
