export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** A plant id: a whole number in the int64 range, as a safe-integer number or an exact bigint. */
export function isInt64(value: unknown): value is number | bigint {
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX;
  return typeof value === 'number' && Number.isSafeInteger(value);
}
