import fastJson from 'fast-json-stringify';

/**
 * Response serialisers from the document's schemas, one per distinct schema: every error
 * status of every operation shares the Error serialiser instead of compiling its own, which
 * Fastify would otherwise do at start-up, dozens of times.
 */
export function cachedSerializerCompiler() {
  const cache = new Map<string, (data: unknown) => string>();
  return ({ schema }: { schema: unknown }) => {
    const key = JSON.stringify(schema);
    let serialize = cache.get(key);
    if (!serialize) cache.set(key, (serialize = fastJson(schema as Parameters<typeof fastJson>[0])));
    return serialize;
  };
}
