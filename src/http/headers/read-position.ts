import type { IncomingHttpHeaders } from 'node:http';
import { InvalidInputError } from '../../domain/errors.js';
import { INT64_MAX } from '../../domain/int64.js';

/**
 * A position header's value (up to 19 digits, as the contract checked them) as a position: the
 * pattern lets 19 digits past int64 through, which no position can be, as `?after=` refuses.
 */
export function positionHeader(name: string, value: string): bigint {
  const position = BigInt(value);
  if (position > INT64_MAX) throw new InvalidInputError(`${name} must be at most ${INT64_MAX}`);
  return position;
}

/**
 * The request's `Change-Position` (digits, as the contract checked them): the least position its
 * read must show, whichever database serves it (Store.reads). Undefined: any within the lag bound.
 */
export function readsAtLeast(headers: IncomingHttpHeaders): bigint | undefined {
  const value = headers['change-position'];
  return typeof value === 'string' ? positionHeader('change-position', value) : undefined;
}
