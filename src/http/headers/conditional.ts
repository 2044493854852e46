// The conditional request headers of RFC 9110 (13.1), read at the edge: If-Match guards a change
// against a lost update, If-None-Match lets a client keep its copy while it is current (or, on
// a change, refuse to change what it does not expect). What they ask goes to the domain's
// `failedPrecondition` (domain/preconditions.ts), in the store's transaction for a write.
import type { IncomingHttpHeaders } from 'node:http';
import type { Preconditions, TagCondition } from '../../domain/preconditions.js';
import { HttpError } from '../errors/http-error.js';

/**
 * One element of a `#entity-tag` list (RFC 9110 5.6.1, 8.8.3), read from where the previous one
 * ended: optional whitespace, an entity tag or nothing (empty elements are allowed), optional
 * whitespace, then a comma or the end. An entity tag may itself hold commas (`etagc` is any
 * visible character but `"`, or obs-text), so the list is read tag by tag, never split on commas.
 */
const ELEMENT = /[ \t]*(?:(W\/)?("[\x21\x23-\x7e\x80-\xff]*"))?[ \t]*(?:,|$)/y;

const STAR = /^[ \t]*\*[ \t]*$/;

/**
 * `*`, or the tags of the list that the header's comparison can match: If-Match compares strongly,
 * so its weak tags are left out; If-None-Match weakly, so `W/"x"` counts as `"x"`. A value that
 * is neither is the client's mistake (400); an empty list (`,`) is a list that names no tag.
 */
function parse(name: string, value: string | string[], weakMatches: boolean): TagCondition {
  // Several field lines are one list (RFC 9110 5.3): Node joins them with ", " itself.
  const text = typeof value === 'string' ? value : value.join(',');
  if (STAR.test(text)) return '*';
  const tags: string[] = [];
  for (let at = 0; at < text.length; at = ELEMENT.lastIndex) {
    ELEMENT.lastIndex = at;
    const m = ELEMENT.exec(text);
    if (!m) throw new HttpError(400, `${name} must be * or a list of entity tags such as "abc" (as ETag sends them)`);
    if (m[2] !== undefined && (weakMatches || m[1] === undefined)) tags.push(m[2]);
  }
  return tags;
}

/** The request's If-Match and If-None-Match, undefined when it sent neither. */
export function preconditions(headers: IncomingHttpHeaders): Preconditions | undefined {
  const ifMatch = headers['if-match'];
  const ifNoneMatch = headers['if-none-match'];
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  const conditions: Preconditions = {};
  if (ifMatch !== undefined) conditions.ifMatch = parse('If-Match', ifMatch, false);
  if (ifNoneMatch !== undefined) conditions.ifNoneMatch = parse('If-None-Match', ifNoneMatch, true);
  return conditions;
}
