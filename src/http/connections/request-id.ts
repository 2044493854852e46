import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { looksLikeCredential } from '../../log.js';

const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Echo a caller's request id when it is safe to put in logs and headers; otherwise make one. A
 * credential sent as the id (a token or ticket pasted in the wrong header) is not safe: the log
 * shows every request's id.
 */
export function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && VALID.test(incoming) && !looksLikeCredential(incoming)
    ? incoming
    : randomUUID();
}
