// `Expect` (RFC 9110 10.1.1), answered in the Error shape instead of by Node: Node sends
// `100 Continue` at once, before anything of the request is checked, and its 417 has no body.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { writeError } from '../errors/error-body.js';

/** Requests that asked for `100 Continue` (Expect: 100-continue) and have not been given it yet. */
const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * Sends `100 Continue` to a request that asked for it: called once the request has passed
 * routing, the credential, the content type and the declared size, so a refused request's
 * body is never invited.
 */
export function inviteBody(req: IncomingMessage, res: ServerResponse): void {
  if (!awaitingContinue.has(req)) return;
  awaitingContinue.delete(req);
  res.writeContinue();
}

/**
 * - `Expect` other than 100-continue: 417, and the connection closes;
 * - `Expect: 100-continue`: no automatic `100 Continue`; the request goes on, and `inviteBody`
 *   sends it once the request has been accepted.
 */
export function answerExpect(server: Server): void {
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    writeError(res, 417, 'the Expect header can only be 100-continue', {
      'x-request-id': randomUUID(),
      connection: 'close',
    });
  });
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    awaitingContinue.add(req);
    server.emit('request', req, res);
  });
}
