import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { JsonObject, Operation } from '../../openapi/document.js';
import { HttpError } from '../errors/http-error.js';
import { ticketElsewhere } from '../plugins/auth.js';

/**
 * A preValidation hook holding a request's query to what its operation declares, before the
 * schema checks the values:
 * - a parameter the document does not declare is refused, naming it, so that a client relying
 *   on a filter the operation does not have learns it instead of getting everything (a `ticket`,
 *   on an operation that takes no credential, is 401 as on every other: plugins/auth.ts);
 * - an array parameter (`tag=a&tag=b`) is an array even when given once;
 * - any other parameter given more than once is refused rather than one of its values picked.
 */
export function queryGuard(op: Operation) {
  const declared = op.parameters.filter((p) => p.in === 'query');
  const arrays = new Set(declared.filter((p) => (p.schema as JsonObject).type === 'array').map((p) => p.name));
  const names = new Set(declared.map((p) => p.name as string));
  const takes = names.size === 0 ? 'takes no query parameters' : `takes only ${[...names].join(', ')}`;
  // Synchronous, as the request log's hooks are (see request-log.ts).
  return function (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    // No query, nothing to hold: reading request.query would parse one (an object a request).
    if (!request.url.includes('?')) return done();
    checkEncoding(request.url);
    const query = request.query as Record<string, string | string[]>;
    const unknown = Object.keys(query).filter((name) => !names.has(name));
    // A ticket where none is taken is a credential in a query string, as on the other operations.
    if (unknown.includes('ticket')) throw ticketElsewhere();
    if (unknown.length > 0) {
      const listed = unknown.map((n) => JSON.stringify(n.length > 40 ? `${n.slice(0, 40)}…` : n)).slice(0, 5);
      const noun = unknown.length === 1 ? 'query parameter' : 'query parameters';
      throw new HttpError(400, `unknown ${noun} ${listed.join(', ')}: ${op.method} ${op.path} ${takes}`);
    }
    for (const [name, value] of Object.entries(query)) {
      if (arrays.has(name)) {
        if (!Array.isArray(value)) query[name] = [value];
      } else if (Array.isArray(value)) {
        throw new HttpError(400, `query parameter ${name} is given ${value.length} times; give it once`);
      }
    }
    done();
  };
}

/**
 * The query parser keeps a malformed escape (`%`, `%zz`) or bytes that are not UTF-8 (`%FF`) as
 * they are, so a search would run for text the client never meant; such a query is refused.
 */
function checkEncoding(url: string): void {
  const at = url.indexOf('?');
  if (at === -1) return;
  for (const piece of url.slice(at + 1).split(/[&=]/)) {
    try {
      decodeURIComponent(piece.replace(/\+/g, ' '));
    } catch {
      throw new HttpError(400, 'the query string is not valid (bad percent-encoding, or bytes that are not UTF-8)');
    }
  }
}
