// The Error body, `{"error": <status>, "message": ...}`: every error answer of both listeners
// has it, however it leaves (through Fastify, on a Node response, or as bytes on a socket).
import { randomUUID } from 'node:crypto';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

// node:http is taken with process.getBuiltinModule, not an ESM import: an ESM import builds a
// facade that reads every export, and Node 24's lazy WebSocket export then loads undici (the
// engine of fetch) at every start, a visible part of start-up (docs/performance.md). Types come
// from `import type`, which compiles to nothing.
const { STATUS_CODES } = process.getBuiltinModule('node:http');

/** The document's Error schema: the status again, and one line for the client. */
export interface ErrorBody {
  error: number;
  message: string;
}

/** The one builder of an Error body. */
export function errorBody(status: number, message: string): ErrorBody {
  return { error: status, message };
}

/**
 * An Error answer on a response of Node's HTTP server, for those given outside Fastify: the
 * media type Fastify gives JSON (unless `headers` names another), the length, then `headers`.
 */
export function writeError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: OutgoingHttpHeaders = {},
): void {
  const body = JSON.stringify(errorBody(status, message));
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** The bytes of a whole response written straight to a socket: the Error shape, then the connection closes. */
export function rawErrorResponse(status: number, message: string): string {
  const body = JSON.stringify(errorBody(status, message));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nx-request-id: ${randomUUID()}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
