// The conditions of RFC 9110 section 13 a request may put on a plant, and their evaluation, in
// one place: the write path decides a change with them inside the store's transaction, and a
// read of one plant with the same function.

/** One condition: any current representation (`*`), or one of these entity tags. */
export type TagCondition = '*' | string[];

/**
 * What `If-Match` and `If-None-Match` ask, undefined for a header that was not sent. The edge
 * keeps, of each list, the tags its comparison can match: If-Match compares strongly, so weak
 * tags are left out (a list of weak tags only never holds); If-None-Match compares weakly, so
 * `W/"x"` is kept as `"x"`.
 */
export interface Preconditions {
  ifMatch?: TagCondition;
  ifNoneMatch?: TagCondition;
}

/** The header whose condition failed. */
export type FailedPrecondition = 'If-Match' | 'If-None-Match';

function names(condition: TagCondition, etag: string | undefined): boolean {
  return condition === '*' || (etag !== undefined && condition.includes(etag));
}

/**
 * Evaluates the conditions on a representation that exists, with this entity tag (undefined: it
 * has none, as a page of the list has none; then only `*` names it), in RFC 9110 13.2.2's order:
 * If-Match first, then If-None-Match. If-Unmodified-Since and If-Modified-Since
 * never apply: plants have no modification date (13.1.3, 13.1.4 say to ignore them then).
 * Undefined when the request may go ahead. A missing plant is not evaluated at all: without its
 * conditions the request would be 404, and 13.2.1 says conditions are then ignored.
 */
export function failedPrecondition(
  conditions: Preconditions,
  etag: string | undefined,
): FailedPrecondition | undefined {
  if (conditions.ifMatch !== undefined && !names(conditions.ifMatch, etag)) return 'If-Match';
  if (conditions.ifNoneMatch !== undefined && names(conditions.ifNoneMatch, etag)) return 'If-None-Match';
  return undefined;
}
