// Writes JSON like JSON.stringify, except that a bigint is written as a bare integer, digit
// for digit, instead of throwing. Together with read-json.ts it carries int64 ids past 2^53
// through JavaScript without rounding them.

/** `JSON.stringify(value)`, with bigints written as exact integers. Throws when nothing can be written. */
export function writeJson(value: unknown): string {
  const text = write(value);
  if (text === undefined) throw new TypeError(`a ${typeof value} cannot be written as JSON`);
  return text;
}

function write(value: unknown): string | undefined {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return write(withToJson.toJSON());
  // Same rules as JSON.stringify: in an array what cannot be written is null, in an object it is left out.
  if (Array.isArray(value)) return `[${value.map((item: unknown) => write(item) ?? 'null').join(',')}]`;
  const members: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    const text = write(member);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}
