import type { JsonObject } from './document.js';

/**
 * Request body schemas are the document's schemas with two changes. An int64 cannot be checked
 * by JSON Schema's `type: integer` because exact int64 values past 2^53 arrive as bigint (see
 * json/read-json.ts): such nodes become the `int64` keyword, which accepts safe-integer numbers
 * and in-range bigints. A discriminator loses its `mapping`: Ajv finds each value in the `const`
 * of its branch and refuses a mapping, which the document keeps for generated clients (without
 * one, openapi-typescript names each branch's value after its schema); the values are listed
 * beside it for the validator. Everything else is passed
 * through untouched.
 */
export function requestSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(requestSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as JsonObject;
  if (node.type === 'integer' && node.format === 'int64') {
    const { type: _type, format: _format, ...rest } = node;
    return { ...rest, int64: true };
  }
  if (node.discriminator !== undefined) {
    const { discriminator, ...rest } = node;
    const { mapping: _mapping, ...kept } = discriminator as JsonObject;
    // The values the branches take, checked first: a wrong one is then refused naming them all,
    // where the discriminator alone would say only that it is wrong.
    const name = kept.propertyName as string;
    const values = (rest.oneOf as JsonObject[]).map((b) => (b.properties as JsonObject)[name] as JsonObject);
    const tag = { type: 'string', enum: values.map((v) => v.const) };
    return {
      ...(requestSchema(rest) as JsonObject),
      required: [name],
      properties: { [name]: tag },
      discriminator: kept,
    };
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, requestSchema(v)]));
}

const RANGES: Record<string, [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
};

/**
 * Path and query values arrive as text. An integer there is plain decimal digits with an
 * optional minus, nothing else (no `1e3`, no `+1`, no spaces), so `type: integer` becomes the
 * `decimalInteger` keyword, which checks the digits and the range and hands the handler a
 * number (int32) or an exact bigint (int64).
 */
export function parametersSchema(
  parameters: JsonObject[],
  location: 'path' | 'query' | 'header',
): JsonObject | undefined {
  const mine = parameters.filter((p) => p.in === location);
  if (mine.length === 0) return undefined;
  // Node hands header names over in lowercase.
  const name = (p: JsonObject) => (location === 'header' ? (p.name as string).toLowerCase() : (p.name as string));
  const properties: JsonObject = {};
  for (const p of mine) properties[name(p)] = parameterSchema(p.schema as JsonObject);
  const required = mine.filter((p) => p.required).map(name);
  return { type: 'object', properties, ...(required.length && { required }) };
}

function parameterSchema(schema: JsonObject): JsonObject {
  // `true` or `false`, spelled so, and nothing else (not `1`, not `yes`): the handler gets a boolean.
  if (schema.type === 'boolean') {
    return { ...(schema.default !== undefined && { default: String(schema.default) }), textBoolean: true };
  }
  if (schema.type !== 'integer') return schema;
  const format = schema.format === 'int32' ? 'int32' : 'int64';
  const [lo, hi] = RANGES[format]!;
  const min = schema.minimum === undefined ? lo : BigInt(schema.minimum as number);
  const max = schema.maximum === undefined ? hi : BigInt(schema.maximum as number);
  return {
    ...(schema.default !== undefined && { default: String(schema.default) }),
    decimalInteger: { min: String(min), max: String(max), bigint: format === 'int64' },
  };
}
