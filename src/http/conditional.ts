// The conditional request headers of RFC 9110 (13.1): If-Match guards a change against a lost
// update, If-None-Match lets a client keep its copy of a plant while it is current.
import type { Precondition } from '../domain/plant-write.js';
import { HttpError } from './http-error.js';

/** One entity-tag: the opaque tag with its quotes, and whether it was weak (`W/`). */
interface EntityTag {
  tag: string;
  weak: boolean;
}

const ELEMENT = /^(W\/)?("[\x21\x23-\x7e\x80-\xff]*")$/;

/** `*`, or the list of entity tags; a value that is neither is the client's mistake (400). */
function parse(name: string, value: string): '*' | EntityTag[] {
  if (value.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  for (const element of value.split(',')) {
    const trimmed = element.trim();
    if (trimmed === '') continue;
    const m = ELEMENT.exec(trimmed);
    if (!m) throw new HttpError(400, `${name} must be * or a list of entity tags such as "abc" (as ETag sends them)`);
    tags.push({ tag: m[2]!, weak: m[1] !== undefined });
  }
  if (tags.length === 0) throw new HttpError(400, `${name} is empty; send * or entity tags`);
  return tags;
}

/**
 * The precondition of `If-Match`, undefined when absent. Its comparison is strong: a weak tag can
 * never match, so one made only of weak tags always fails (412).
 */
export function ifMatch(value: string | undefined): Precondition | undefined {
  if (value === undefined) return undefined;
  const parsed = parse('If-Match', value);
  return parsed === '*' ? '*' : parsed.filter((t) => !t.weak).map((t) => t.tag);
}

/** Whether `If-None-Match` names this current ETag (weak comparison), or is `*`; false when absent. */
export function noneMatchHolds(value: string | undefined, etag: string): boolean {
  if (value === undefined) return false;
  const parsed = parse('If-None-Match', value);
  return parsed === '*' || parsed.some((t) => t.tag === etag);
}
