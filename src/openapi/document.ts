import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The OpenAPI document as it stands in the repository; everything the HTTP layer knows about the contract comes from here. */
export const documentPath = new URL('../../openapi/plant-store.yaml', import.meta.url);
/**
 * The JSON copy `npm run build` writes into dist/openapi/: parsing YAML costs start-up time. The
 * same path from src/ (tests) and from dist/ (the built package), used only while newer than the YAML.
 */
const builtCopy = new URL('../../dist/openapi/plant-store.json', import.meta.url);

export type JsonObject = Record<string, unknown>;

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  /** Scopes of the operation's bearerAuth requirement; undefined when the operation needs no credential. */
  scopes: string[] | undefined;
  requestBody: JsonObject | undefined;
  /** The one media type the request body is sent in (`application/json`, or `application/merge-patch+json`). */
  requestMediaType: string | undefined;
  parameters: JsonObject[];
  /** Response schemas by status code, $refs resolved. */
  responses: Record<string, JsonObject | undefined>;
}

export interface ApiDocument {
  raw: JsonObject;
  operations: Map<string, Operation>;
  /** Every path of the document with the methods it supports (HEAD wherever GET), for 404/405 answers. */
  paths: { path: string; pattern: RegExp; methods: string[] }[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

export function loadDocument(path: URL = documentPath): ApiDocument {
  const raw = readDocument(path);
  const resolved = resolveRefs(raw, raw) as JsonObject;
  const globalSecurity = resolved.security as JsonObject[] | undefined;
  const operations = new Map<string, Operation>();
  const paths: ApiDocument['paths'] = [];
  for (const [path, item] of Object.entries(resolved.paths as Record<string, JsonObject>)) {
    const methods = METHODS.filter((m) => m in item);
    // HEAD is served wherever GET is (RFC 9110 9.3.2: the same answer without its body).
    const allowed = methods.flatMap((m) => (m === 'get' && !('head' in item) ? ['GET', 'HEAD'] : [m.toUpperCase()]));
    paths.push({ path, pattern: pathPattern(path), methods: allowed });
    for (const method of methods) {
      const op = item[method] as JsonObject;
      const security = (op.security ?? globalSecurity) as Record<string, string[]>[] | undefined;
      const bearer = security?.find((req) => 'bearerAuth' in req);
      const content = (op.requestBody as JsonObject | undefined)?.content as Record<string, JsonObject> | undefined;
      operations.set(op.operationId as string, {
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        scopes: bearer ? (bearer.bearerAuth ?? []) : undefined,
        requestBody: content && (Object.values(content)[0]?.schema as JsonObject | undefined),
        requestMediaType: content && Object.keys(content)[0],
        parameters: [
          ...((item.parameters as JsonObject[] | undefined) ?? []),
          ...((op.parameters as JsonObject[] | undefined) ?? []),
        ],
        responses: Object.fromEntries(
          Object.entries(op.responses as Record<string, JsonObject>).map(([status, r]) => [
            status,
            (r.content as Record<string, JsonObject> | undefined)?.['application/json']?.schema as
              JsonObject | undefined,
          ]),
        ),
      });
    }
  }
  return { raw, operations, paths };
}

/** The document as written (its `$ref`s in place), from the built JSON copy when it is current. */
export function readDocument(path: URL = documentPath): JsonObject {
  const copy = statSync(builtCopy, { throwIfNoEntry: false });
  if (path === documentPath && copy && copy.mtimeMs >= statSync(path).mtimeMs) {
    return JSON.parse(readFileSync(builtCopy, 'utf8')) as JsonObject;
  }
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return parse(readFileSync(path, 'utf8')) as JsonObject;
}

/** Replaces local `$ref`s by what they point at; the document has no cycles. */
function resolveRefs(node: unknown, root: JsonObject): unknown {
  if (Array.isArray(node)) return node.map((n) => resolveRefs(n, root));
  if (node === null || typeof node !== 'object') return node;
  const obj = node as JsonObject;
  if (typeof obj.$ref === 'string') {
    const target = (obj.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((at, key) => (at as JsonObject)[key.replace(/~1/g, '/').replace(/~0/g, '~')], root);
    if (target === undefined) throw new Error(`unresolved $ref ${obj.$ref}`);
    return resolveRefs(target, root);
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, resolveRefs(v, root)]));
}

/** `/plants/{id}` becomes a pattern matching one path segment per template variable. */
function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
