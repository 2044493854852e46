import type { IncomingHttpHeaders } from 'node:http';

/**
 * The request's `Change-Position` (digits, as the contract checked them): the least position its
 * read must show, whichever database serves it (Store.reads). Undefined: any within the lag bound.
 */
export function readsAtLeast(headers: IncomingHttpHeaders): bigint | undefined {
  const value = headers['change-position'];
  return typeof value === 'string' ? BigInt(value) : undefined;
}
