import type { FastifyInstance, RouteHandlerMethod, RouteOptions } from 'fastify';
import { requireScope, type AuthDeps } from '../auth/authenticate.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ApiDocument } from '../openapi/document.js';
import { parametersSchema, requestSchema } from '../openapi/request-schema.js';
import type { Store } from '../store/store.js';
import { requireJsonContentType } from './json-body.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation's path template in the document (`/plants/{id}`): the route label of metrics. */
    route?: string;
  }
}

/** What route files need: the contract, the store, the bearer check's parts (token look-up, JWT, limits), metrics. */
export interface RouteDeps extends AuthDeps {
  doc: ApiDocument;
  store: Store;
  metrics: Metrics;
}

export interface OperationRouteOptions {
  /** Send this operation's bodies as they are instead of serialising them through the response schemas. */
  rawResponse?: boolean;
}

/**
 * Registers the handler of one operation of the document. Method, path, the scope it needs,
 * request validation and response serialisation all come from the document, so the route
 * cannot drift from what is published.
 */
export function operationRoute(
  app: FastifyInstance,
  deps: RouteDeps,
  operationId: string,
  handler: RouteHandlerMethod,
  options: OperationRouteOptions = {},
): void {
  const op = deps.doc.operations.get(operationId);
  if (!op) throw new Error(`operation ${operationId} is not in the OpenAPI document`);
  const responses = Object.fromEntries(
    Object.entries(op.responses).filter((entry): entry is [string, Record<string, unknown>] => !!entry[1]),
  );
  const params = parametersSchema(op.parameters, 'path');
  const querystring = parametersSchema(op.parameters, 'query');
  const route: RouteOptions = {
    method: op.method,
    url: op.path.replace(/\{([^}]+)\}/g, ':$1'),
    schema: {
      ...(op.requestBody && { body: requestSchema(op.requestBody) }),
      ...(params && { params }),
      ...(querystring && { querystring }),
      ...(!options.rawResponse && { response: responses }),
    },
    config: { route: op.path },
    handler,
  };
  if (op.scopes) route.onRequest = requireScope(deps, op.scopes[0]);
  if (op.requestBody) route.preParsing = requireJsonContentType;
  app.route(route);
}
