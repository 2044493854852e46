import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from './config.js';
import { createJwtVerifier } from './auth/jwt.js';
import { cachedTokenLookup } from './auth/token-cache.js';
import { clientErrorHandler, errorHandler } from './http/errors.js';
import { HttpError } from './http/http-error.js';
import { registerJsonBody } from './http/json-body.js';
import { registerOverloadGuard } from './http/overload.js';
import { registerRateLimits } from './http/rate-limit.js';
import { requestId } from './http/request-id.js';
import { routeNotFound } from './http/routing.js';
import { docsRoutes } from './http/routes/docs.js';
import { cachedSerializerCompiler } from './http/serialization.js';
import { operationsRoutes } from './http/routes/operations.js';
import { plantRoutes } from './http/routes/plants.js';
import { createAjv, validationError } from './http/validation.js';
import { loggerOptions, redactUrl } from './log.js';
import { createMetrics, NO_ROUTE, type Metrics } from './metrics/metrics.js';
import { loadDocument, type ApiDocument } from './openapi/document.js';
import { StoreUnavailableError, type Store } from './store/store.js';

/** The one log line of a request. */
function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  request.log.info(
    {
      method: request.method,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      ...(request.principal?.kind === 'token' && { tokenId: request.principal.id }),
      ...(request.principal?.kind === 'jwt' && { sub: request.principal.id }),
    },
    'request',
  );
}

export interface AppDeps {
  config: Config;
  store: Store;
  doc?: ApiDocument;
  /** Metrics to record into; a registry of its own otherwise. */
  metrics?: Metrics;
}

/** Builds the HTTP service from a config and a store; listening is the caller's business. */
export async function buildApp({
  config,
  store,
  doc = loadDocument(),
  metrics = createMetrics(store),
}: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(config.logLevel),
    // One line per request, written by the onResponse hook below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestId,
    bodyLimit: config.bodyLimit,
    exposeHeadRoutes: false,
    return503OnClosing: false,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    // Node only checks headersTimeout every connectionsCheckingInterval (30 s by default).
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    clientErrorHandler,
    // Requests refused before routing (a malformed URL) skip the hooks: header and log line here.
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id);
      reply.raw.once('finish', () => logRequest(request, reply));
      return errorHandler(err, request, reply);
    },
    schemaErrorFormatter: (errors, part) => validationError(errors, part),
  });

  const ajv = createAjv();
  // Compiled once per distinct schema: the {id} path parameter serves three operations.
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  app.setValidatorCompiler(({ schema }) => {
    const key = JSON.stringify(schema);
    let validate = validators.get(key);
    if (!validate) validators.set(key, (validate = ajv.compile(schema)));
    return validate;
  });
  app.setSerializerCompiler(cachedSerializerCompiler());
  app.setErrorHandler(errorHandler);
  registerJsonBody(app, config.bodyLimit);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      throw new HttpError(503, 'the server is shutting down; retry', { 'retry-after': '1' });
    }
  });
  app.addHook('onRequest', routeNotFound(doc));
  app.addHook('onResponse', async (request, reply) => {
    logRequest(request, reply);
    const route = request.routeOptions.config.route ?? NO_ROUTE;
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  app.addHook('onError', async (_request, _reply, err) => {
    if (err instanceof StoreUnavailableError) metrics.storeError();
  });
  // After routing (404/405 first), before every route's own credential check.
  await registerOverloadGuard(app, config, store, metrics.overloaded);

  const deps = {
    doc,
    store,
    metrics,
    findToken: cachedTokenLookup(store),
    verifyJwt: config.jwt && (await createJwtVerifier(config.jwt)),
    limits: await registerRateLimits(app, config, metrics.rateLimited),
  };
  plantRoutes(app, deps);
  operationsRoutes(app, deps);
  docsRoutes(app, deps);
  return app;
}
