import type { JsonObject } from './document.js';

const isObjectSchema = (s: unknown): s is JsonObject =>
  s !== null && typeof s === 'object' && (s as JsonObject).type === 'object' && 'properties' in s;

/**
 * The property that several branches of a `oneOf` define: theirs when they agree, or their common
 * JSON type (`status`: 200 in one branch, 204 in the other, an integer in both); undefined when
 * they have nothing simple in common.
 */
function mergedProperty(schemas: JsonObject[]): JsonObject | undefined {
  const first = JSON.stringify(schemas[0]);
  if (schemas.every((s) => JSON.stringify(s) === first)) return schemas[0];
  const type = schemas[0]!.type;
  const simple = type === 'integer' || type === 'number' || type === 'string' || type === 'boolean';
  return simple && schemas.every((s) => s.type === type) ? { type } : undefined;
}

/** A `oneOf` of objects as one object with every branch's properties, or undefined. */
function merged(node: JsonObject): JsonObject | undefined {
  const given = node.oneOf as unknown[];
  if (!given.every(isObjectSchema)) return undefined;
  const branches = given as JsonObject[];
  const properties: JsonObject = {};
  const names = new Set(branches.flatMap((b) => Object.keys(b.properties as JsonObject)));
  for (const name of names) {
    const defined = branches
      .map((b) => (b.properties as JsonObject)[name] as JsonObject | undefined)
      .filter((s): s is JsonObject => s !== undefined);
    const one = mergedProperty(defined);
    if (one === undefined) return undefined;
    properties[name] = one;
  }
  const required = branches
    .map((b) => (b.required as string[] | undefined) ?? [])
    .reduce((common, r) => common.filter((n) => r.includes(n)));
  return { type: 'object', properties, required, additionalProperties: false };
}

/**
 * Response schemas as the serialiser takes them: the document's, with each `oneOf` of objects
 * written as one object holding every branch's properties. fast-json-stringify picks a `oneOf`
 * branch by validating the value against each, on every value: a 1,000-result batch answer was
 * validated 2,000 times (patterns, lengths) on its way out, a tenth of the batch's CPU. Which
 * branch an answer is, is the handler's to get right, and the tests check every answer against
 * the document itself (test/support/conformance.ts); the serialiser only needs the names and
 * types to write. A `oneOf` whose branches share a property with nothing simple in common stays.
 */
export function responseSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(responseSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const walked = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, responseSchema(v)])) as JsonObject;
  if (!Array.isArray(walked.oneOf)) return walked;
  const { oneOf: _oneOf, discriminator: _d, ...rest } = walked;
  const one = merged(walked);
  return one === undefined ? walked : { ...rest, ...one };
}
