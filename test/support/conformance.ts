import type { Ajv } from 'ajv';
import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import { OpenAPIBackend, SetMatchType, type Document, type Operation } from 'openapi-backend';
import { readDocument, type JsonObject } from '../../src/openapi/document.js';
import type { RawResponse } from './http.js';

/**
 * The live conformance check: every response a test receives is validated against the OpenAPI
 * document by openapi-backend (routing, response bodies and response headers), with Ajv's
 * JSON Schema 2020-12 dialect, the one OpenAPI 3.1 schemas are written in.
 */
const definition = readDocument() as unknown as Document;

/** Bodies arrive through JSON.parse, which rounds ids past 2^53: 2^63 - 1 arrives as 2^63. */
const INT64_LIMIT = 2 ** 63;

function createAjv(options: Options): Ajv2020 {
  const ajv = new Ajv2020({ ...options, strict: false, allErrors: true });
  ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', {
    type: 'number',
    validate: (n) => Number.isInteger(n) && n >= -INT64_LIMIT && n <= INT64_LIMIT,
  });
  // RFC 3339's date-time, as a change's `time` is written (toISOString: UTC, milliseconds).
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)),
  });
  return ajv;
}

// quick: openapi-backend's own check of the document knows OpenAPI 3.0 only; the document is
// checked by `npm run lint:openapi` (Redocly and Spectral) instead.
const api = new OpenAPIBackend({
  definition,
  quick: true,
  // Ajv2020 and openapi-backend's Ajv share one core; only their default dialects differ.
  customizeAjv: (_ajv, options) => createAjv(options) as unknown as Ajv,
});
await api.init();

const errorSchema = createAjv({}).compile(
  (definition.components as { schemas: Record<string, JsonObject> }).schemas.Error!,
);

/** Statuses any request can get from the HTTP layer before it reaches an operation (see the document's error table). */
const ANY_ROUTE = new Set([400, 408, 414, 417, 431, 501]);

function mediaType(headers: RawResponse['headers']): string {
  return String(headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

/** The operation a request reaches, or the status the document implies for a request that reaches none. */
function route(method: string, path: string): Operation | 404 | 405 {
  try {
    return api.router.matchOperation({ method, path, headers: {} }, true);
  } catch (err) {
    return String(err).includes('405') ? 405 : 404;
  }
}

/**
 * Checks one live response against the OpenAPI document: the status is declared for the
 * operation, the content type is one the document lists for it, the body matches its schema,
 * the declared headers match theirs, and error bodies carry their own status. Returns the
 * list of disagreements (empty when the response conforms).
 */
export function checkResponse(method: string, rawPath: string, res: RawResponse): string[] {
  // HEAD is GET's answer without its body (RFC 9110 9.3.2): held to GET's statuses and headers.
  if (method === 'HEAD') {
    return res.text !== '' ? [`HEAD ${rawPath} ${res.status} has a body`] : check('GET', rawPath, res, true);
  }
  return check(method, rawPath, res, false);
}

function check(method: string, rawPath: string, res: RawResponse, headless: boolean): string[] {
  const path = rawPath.split('?')[0] ?? '';
  const status = String(res.status);
  const type = mediaType(res.headers);
  const problems: string[] = [];
  const operation = route(method, path);

  const preflight = method === 'OPTIONS' && operation === 405 && /^\/plants(\/|$)/.test(path);
  if (preflight && (res.status === 204 || res.status === 403)) {
    // A CORS preflight under /plants: answered before any operation, as "Pages on other origins"
    // says; 204 has the headers of the document's x-cors-preflight, 403 the Error body (checked below).
    if (res.status === 204) problems.push(...preflightProblems(res));
  } else if (typeof operation === 'number') {
    if (res.status !== operation && !ANY_ROUTE.has(res.status)) {
      problems.push(`${method} ${path} matches ${operation === 404 ? 'no path' : 'no method'}, but answered ${status}`);
    }
    if (res.status === 405 && !res.headers.allow) problems.push('405 without an Allow header');
  } else {
    const declared = operation.responses?.[status] as { content?: Record<string, unknown> } | undefined;
    const name = `${operation.operationId} (${method} ${operation.path})`;
    if (!declared && !ANY_ROUTE.has(res.status)) {
      problems.push(`${name} answered ${status}, which the document does not declare`);
    } else if (declared && !declared.content && res.text !== '') {
      problems.push(`${name} ${status} has a body, but the document declares none`);
    } else if (declared?.content && !(type in declared.content)) {
      problems.push(
        `${name} ${status} has content-type "${type}"; the document lists ${Object.keys(declared.content)}`,
      );
    }
    if (declared && !headless && type === 'application/json' && res.json !== undefined) {
      const result = api.validator.validateResponse(res.json, operation, res.status);
      if (result.errors) problems.push(`${name} ${status} body: ${describe(result.errors)}`);
    }
    // Ajv coerces header values ("1" to 1) in place: it gets a copy.
    const headers = api.validator.validateResponseHeaders({ ...res.headers }, operation, {
      statusCode: res.status,
      setMatchType: SetMatchType.Any,
    });
    if (headers.errors) problems.push(`${name} ${status} headers: ${describe(headers.errors)}`);
    // openapi-backend checks the headers a response has, not that the required ones are there.
    const declaredHeaders = (declared as { headers?: Record<string, { required?: boolean }> } | undefined)?.headers;
    for (const [header, spec] of Object.entries(declaredHeaders ?? {})) {
      if (spec.required && res.headers[header.toLowerCase()] === undefined) {
        problems.push(`${name} ${status} headers: must have required property '${header.toLowerCase()}'`);
      }
    }
  }

  if (headless) return problems;
  if (type === 'application/json' && res.json === undefined) {
    problems.push(`${status} body is not JSON: ${res.text.slice(0, 80)}`);
  }
  // Errors that reach no operation, or that the HTTP layer sends, are still the seed's Error.
  if (res.status >= 400) {
    if (type !== 'application/json') problems.push(`${status} with content-type "${type}", not application/json`);
    else if (res.json !== undefined && !errorSchema(res.json)) {
      problems.push(`${status} body is not an Error: ${describe(errorSchema.errors)}`);
    } else if (res.json !== undefined && (res.json as { error: number }).error !== res.status) {
      problems.push(`error field ${(res.json as { error: number }).error} differs from the status ${status}`);
    }
  }
  return problems;
}

/** A preflight's 204 against the document's `x-cors-preflight`: its headers, no body. */
function preflightProblems(res: RawResponse): string[] {
  const spec = (definition as unknown as JsonObject)['x-cors-preflight'] as {
    headers: Record<string, { required?: boolean; schema?: { pattern?: string } }>;
  };
  const problems = res.text === '' ? [] : ['preflight 204 has a body'];
  for (const [name, header] of Object.entries(spec.headers)) {
    const value = res.headers[name.toLowerCase()];
    if (header.required && value === undefined) problems.push(`preflight 204 lacks ${name}`);
    const pattern = header.schema?.pattern;
    if (value !== undefined && pattern && !new RegExp(pattern).test(String(value))) {
      problems.push(`preflight 204 ${name} "${value}" does not match ${pattern}`);
    }
  }
  return problems;
}

function describe(errors: { instancePath: string; message?: string }[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is not valid'}`).join('; ');
}
