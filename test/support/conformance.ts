import { Ajv2020 } from 'ajv/dist/2020.js';
import { loadDocument, type JsonObject } from '../../src/openapi/document.js';
import type { RawResponse } from './http.js';

const doc = loadDocument();
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
const compiled = new WeakMap<JsonObject, ReturnType<typeof ajv.compile>>();

/** Statuses any request can get before routing: Node's parser and Fastify's URL checks. */
const ANY_ROUTE = new Set([400, 408, 414, 431]);

/**
 * Checks one live response against the OpenAPI document: the status is declared for the
 * operation, non-2xx bodies are the Error shape in JSON, and bodies match their schema.
 * Returns the list of disagreements (empty when the response conforms).
 */
export function checkResponse(method: string, rawPath: string, res: RawResponse): string[] {
  const path = rawPath.split('?')[0] ?? '';
  const problems: string[] = [];
  const item = doc.paths.find((p) => p.pattern.test(path));
  const op = item && [...doc.operations.values()].find((o) => o.path === item.path && o.method === method);
  const declared = op?.responses;
  const status = String(res.status);
  if (!item) {
    if (res.status !== 404 && !ANY_ROUTE.has(res.status)) problems.push(`unknown path answered ${status}, not 404`);
  } else if (!op) {
    if (res.status !== 405 && !ANY_ROUTE.has(res.status))
      problems.push(`unsupported method answered ${status}, not 405`);
  } else if (!(status in declared!) && !ANY_ROUTE.has(res.status)) {
    problems.push(`${method} ${item.path} answered ${status}, which the document does not declare`);
  }
  const type = String(res.headers['content-type'] ?? '');
  if (res.status >= 400 && !type.startsWith('application/json')) problems.push(`${status} with content-type "${type}"`);
  const schema = declared?.[status] ?? (res.status >= 400 ? errorSchema() : undefined);
  if (schema && res.text !== '') {
    let validate = compiled.get(schema);
    if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
    if (res.json === undefined) problems.push(`${status} body is not JSON: ${res.text.slice(0, 80)}`);
    else if (!validate(res.json))
      problems.push(`${status} body does not match its schema: ${ajv.errorsText(validate.errors)}`);
  }
  if (res.status >= 400 && res.json !== undefined && (res.json as { error?: unknown }).error !== res.status) {
    problems.push(`error field ${(res.json as { error?: unknown }).error} differs from the status ${status}`);
  }
  return problems;
}

function errorSchema(): JsonObject {
  return (doc.raw.components as { schemas: Record<string, JsonObject> }).schemas.Error!;
}
