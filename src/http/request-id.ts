import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a caller's request id when it is safe to put in logs and headers; otherwise make one. */
export function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && VALID.test(incoming) ? incoming : randomUUID();
}
