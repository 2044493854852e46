import { responseSchema } from '../../openapi/response-schema.js';
import { routeOf } from '../route-of.js';
import fastJson from 'fast-json-stringify';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RawReplyDefaultExpression as RawReply,
  RawRequestDefaultExpression as RawRequest,
  RawServerDefault as RawServer,
  RouteHandlerMethod,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import type { ApiDocument } from '../../openapi/document.js';
import type { OperationId, OperationInput } from '../../openapi/operation-types.js';
import { parametersSchema, requestSchema } from '../../openapi/request-schema.js';
import { createAjv } from '../../openapi/validation.js';
import { answerWithoutEtag, checkWithoutEtag } from '../headers/conditional-untagged.js';
import { HttpError } from '../errors/http-error.js';
import { atOnce } from './at-once.js';
import { queryGuard } from '../headers/query-parameters.js';
import { requireContentType } from './json-body.js';

export interface OperationOptions {
  /** Send this operation's bodies as they are instead of serialising them through the response schemas. */
  rawResponse?: boolean;
  /**
   * The handler evaluates If-Match and If-None-Match itself, against the ETag of what it serves
   * or changes (one plant). Otherwise the contract evaluates them against a representation that
   * exists and has no ETag (conditional-untagged.ts).
   */
  ownPreconditions?: boolean;
  /** This operation's own body limit in bytes, in place of the app's. */
  bodyLimit?: number;
  /**
   * Most requests of this operation read and handled at once; past it, 503 with Retry-After
   * before the body is read. For an operation whose bodies are large (a batch's megabyte), so that
   * the memory of bodies in flight has a bound whatever the number of connections.
   */
  atOnce?: number;
}

/** Fastify's view of one operation's request, its parts typed by the document (operation-types.ts). */
export interface OperationRoute<Id extends OperationId> {
  Params: OperationInput<Id>['params'];
  Querystring: OperationInput<Id>['query'];
  Headers: OperationInput<Id>['headers'];
  Body: OperationInput<Id>['body'];
}

/**
 * The handler of one operation. Its request is typed by the document, and the route's schemas
 * (built below from the same document) are what make those types true at run time.
 */
export type OperationHandler<Id extends OperationId> = RouteHandlerMethod<
  RawServer,
  RawRequest,
  RawReply,
  OperationRoute<Id>
>;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Registers the handler of one operation of the document. Method, path, the scope it needs,
     * request validation and response serialisation all come from the document, so the route
     * cannot drift from what is published; the handler's params, query, headers and body are
     * typed from it too.
     */
    operation<Id extends OperationId>(operationId: Id, handler: OperationHandler<Id>, options?: OperationOptions): void;
    /**
     * Throws, naming them, when operations of the document have no handler: called once the
     * routes are registered, so that the app does not start with an operation answering 405.
     */
    checkEveryOperationHandled(): void;
  }
  interface FastifyContextConfig {
    /** The operation's path template in the document (`/plants/{id}`): the route label of metrics. */
    route?: string;
  }
}

/** Header parameters read by code of their own rather than by the contract's validator. */
const OWN_READERS = new Set(['if-match', 'if-none-match']);

/** Each distinct schema compiled once: the {id} parameter and the Error body serve many operations. */
function cached<T>(compile: (schema: unknown) => T): (route: { schema: unknown }) => T {
  const cache = new Map<string, T>();
  return ({ schema }) => {
    const key = JSON.stringify(schema);
    let compiled = cache.get(key);
    if (!compiled) cache.set(key, (compiled = compile(schema)));
    return compiled;
  };
}

/**
 * Answers requests that match no route from the document's paths: a known path with another
 * method is 405 with `Allow`, anything else 404. A path the document names as it is
 * (`/plants/batch`) is that path whatever method comes, as OpenAPI matches concrete paths before
 * templated ones: `GET /plants/batch` is 405, not a read of the plant whose id is "batch" (400).
 * It runs before authentication, so it reveals only what the published document already says.
 */
function routeNotFound(doc: ApiDocument) {
  const concrete = new Map(doc.paths.filter((p) => !p.path.includes('{')).map((p) => [p.path, p]));
  // Synchronous (it calls done), as the request log's hooks are: see request-log.ts.
  return function (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const templated = routeOf(request).config.route?.includes('{') === true;
    if (!request.is404 && !templated) return done();
    const path = request.url.split('?')[0] ?? '';
    const shadowed = templated ? concrete.get(path) : undefined;
    if (templated && !shadowed) return done();
    const known = shadowed ?? doc.paths.find((p) => p.pattern.test(path));
    // Error messages are one line of at most 1024 characters (the Error schema); a path can be far longer.
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    if (!known) throw new HttpError(404, `no route for ${request.method} ${shown}`);
    const allow = known.methods.join(', ');
    throw new HttpError(405, `${request.method} is not allowed on ${known.path}; allowed: ${allow}`, { allow });
  };
}

/**
 * The OpenAPI document as the app's routing, validation and serialisation. Registered before
 * the overload guard and the bearer check, so 404 and 405 answer first; `operation` is called
 * by the routes, once the bearer check (`authenticate`) is there too.
 */
export const contractPlugin = fp<{ doc: ApiDocument }>(
  async (app: FastifyInstance, { doc }) => {
    const ajv = createAjv();
    app.setValidatorCompiler(cached((schema) => ajv.compile(schema as object)));
    app.setSerializerCompiler(cached((schema) => fastJson(schema as Parameters<typeof fastJson>[0])));
    app.addHook('onRequest', routeNotFound(doc));

    const handled = new Set<string>();
    app.decorate('checkEveryOperationHandled', function () {
      const missing = [...doc.operations.keys()].filter((id) => !handled.has(id));
      if (missing.length > 0) {
        const list = missing.join(', ');
        throw new Error(
          `no handler for the OpenAPI document's ${list}: register each with app.operation() (src/http/routes/)`,
        );
      }
    });

    function operation<Id extends OperationId>(
      this: FastifyInstance,
      operationId: Id,
      handler: OperationHandler<Id>,
      options: OperationOptions = {},
    ): void {
      const op = doc.operations.get(operationId);
      if (!op) throw new Error(`operation ${operationId} is not in the OpenAPI document`);
      const responses = Object.fromEntries(
        Object.entries(op.responses)
          .filter((entry): entry is [string, Record<string, unknown>] => !!entry[1])
          .map(([status, schema]) => [status, responseSchema(schema)]),
      );
      const params = parametersSchema(op.parameters, 'path');
      const querystring = parametersSchema(op.parameters, 'query');
      // If-Match and If-None-Match have a reader of their own (conditional.ts), with its own
      // messages; validating every request's headers against them cost writes a third of their CPU.
      const headers = parametersSchema(
        op.parameters.filter((p) => !OWN_READERS.has(String(p.name).toLowerCase())),
        'header',
      );
      const route: RouteOptions<RawServer, RawRequest, RawReply, OperationRoute<Id>> = {
        // HEAD is GET's own route, not Fastify's copy of it (exposeHeadRoutes), whose onSend
        // gives an answer without a body (304) Content-Length: 0 where GET's has none.
        method: op.method === 'GET' ? ['GET', 'HEAD'] : op.method,
        url: op.path.replace(/\{([^}]+)\}/g, ':$1'),
        schema: {
          ...(op.requestBody && { body: requestSchema(op.requestBody) }),
          ...(params && { params }),
          ...(querystring && { querystring }),
          ...(headers && { headers }),
          ...(!options.rawResponse && { response: responses }),
        },
        config: { route: op.path },
        ...(options.bodyLimit !== undefined && { bodyLimit: options.bodyLimit }),
        preValidation: queryGuard(op),
        handler,
      };
      if (op.scopes) route.onRequest = this.authenticate(op.scopes[0]);
      if (op.requestMediaType) {
        const typed = requireContentType(op.requestMediaType);
        const places = options.atOnce === undefined ? undefined : atOnce(options.atOnce);
        route.preParsing = places
          ? (request, reply, payload, done) =>
              places.admit(request, reply, payload, () => typed(request, reply, payload, done))
          : typed;
        if (places) route.handler = places.around(handler);
      }
      if (!options.ownPreconditions) {
        route.preHandler = checkWithoutEtag;
        if (op.method === 'GET') route.onSend = answerWithoutEtag;
      }
      this.route<OperationRoute<Id>>(route);
      handled.add(operationId);
    }
    app.decorate('operation', operation);
  },
  { name: 'contract' },
);
