// What the header fields of a request say that Node's parser leaves unchecked: whether its Host
// is right, whether a singleton field came twice, whether it declares a body.
import type { IncomingMessage } from 'node:http';

/**
 * A request that declares a body: a Content-Length other than 0, or a Transfer-Encoding. Zero is
 * any run of 0 digits (`00` is a valid Content-Length of zero, RFC 9110 8.6).
 */
export function declaresBody(headers: IncomingMessage['headers']): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && !/^\s*0+\s*$/.test(length));
}

/**
 * What is wrong with a request's Host, if anything: HTTP/1.1 requires exactly one (RFC 9112 3.2:
 * 400 without it, and with more than one). Node's own check answers a bare 400 to a missing one
 * and keeps the first of several; this one answers both in the Error shape (both listeners are
 * created with `requireHostHeader: false`).
 */
export function hostProblem(req: IncomingMessage): string | undefined {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
    return 'the Host header is required in an HTTP/1.1 request';
  }
  return repeated(req, 'host') ? 'the Host header is given more than once; send one' : undefined;
}

/**
 * Whether the request has more than one field line named `name` (lower case). Node keeps the
 * first of a singleton field (Host, Authorization, Content-Type) and drops the others unseen;
 * a client that sent two meant one of them, and this server will not guess which.
 */
export function repeated(req: IncomingMessage, name: string): boolean {
  // Counted in rawHeaders: req.headersDistinct would build an array for every header of every
  // request (a visible share of the server's CPU under POST) to answer this one question.
  let seen = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const field = req.rawHeaders[i]!;
    if (field.length === name.length && field.toLowerCase() === name && ++seen > 1) return true;
  }
  return false;
}
