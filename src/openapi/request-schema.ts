import type { JsonObject } from './document.js';

/**
 * Request schemas are the document's schemas with one change: an int64 cannot be checked by
 * JSON Schema's `type: integer` because exact int64 values past 2^53 arrive as bigint (see
 * json/read-json.ts). Such nodes become the `int64` keyword, which accepts safe-integer numbers
 * and in-range bigints. Everything else is passed through untouched.
 */
export function requestSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(requestSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as JsonObject;
  if (node.type === 'integer' && node.format === 'int64') {
    const { type: _type, format: _format, ...rest } = node;
    return { ...rest, int64: true };
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, requestSchema(v)]));
}
