import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { validationError } from '../openapi/validation.js';
import { clientErrorHandler, refuseConnect } from './errors/client-errors.js';
import { errorHandler } from './errors/error-handler.js';
import { answerExpect } from './connections/expect.js';
import { guardConnections } from './connections/connections.js';
import { metricsListenerPlugin } from './metrics-server.js';
import { authPlugin } from './plugins/auth.js';
import { contractPlugin } from './plugins/contract.js';
import { corsOfRefusals, corsPlugin } from './plugins/cors.js';
import { registerJsonBody } from './plugins/json-body.js';
import { lifecyclePlugin } from './plugins/lifecycle.js';
import { registerOverloadGuard } from './plugins/overload.js';
import { logRequest, requestLogPlugin } from './plugins/request-log.js';
import { requestId } from './connections/request-id.js';
import { RequestLogger } from './request-logger.js';
import { consoleRoutes } from './routes/console.js';
import { docsRoutes } from './routes/docs.js';
import { operationsRoutes } from './routes/operations.js';
import { plantRoutes } from './routes/plants.js';
import { changeRoutes } from './routes/changes.js';
import { ticketRoutes } from './routes/tickets.js';
import { changeStreams } from './streams/change-streams-of.js';

/**
 * The HTTP service over the services: small named plugins (logging, life cycle, the bearer
 * check, the contract), then the routes. Listening is the caller's business; `inject` works
 * on what this returns, with the webhook dispatcher running once it is ready.
 */
export async function buildApp(services: Services): Promise<FastifyInstance> {
  const { config, doc, metrics, store } = services;
  const corsOnRefusal = corsOfRefusals(config.corsOrigins);
  const app = Fastify({
    loggerInstance: services.log as FastifyBaseLogger,
    // One line per request, written by the request-log plugin, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: RequestLogger.factory,
    requestIdHeader: false,
    genReqId: requestId,
    bodyLimit: config.bodyLimitBytes,
    // Every GET operation answers HEAD too, with the same route (http/plugins/contract.ts): the
    // same status and headers, no body (RFC 9110 9.3.2).
    exposeHeadRoutes: false,
    return503OnClosing: false,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    // Node only checks headersTimeout every connectionsCheckingInterval (30 s by default). A
    // missing Host is answered by the app (request-log), in the Error shape, not by Node.
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000, requireHostHeader: false },
    clientErrorHandler,
    // Requests refused before routing (a malformed URL) skip the hooks: header and log line here.
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id);
      corsOnRefusal(request, reply);
      reply.raw.once('finish', () => logRequest(request, reply));
      return errorHandler(err, request, reply);
    },
    schemaErrorFormatter: (errors, part) => validationError(errors, part),
  });
  answerExpect(app.server);
  app.server.on('connect', refuseConnect);
  const connections = guardConnections(app.server, {
    maxPipelined: config.maxPipelinedRequests,
    onRefused: () => metrics.overloaded('pipelining'),
    onAcceptError: (err) => app.log.error({ err }, 'could not accept a connection'),
  });
  app.addHook('preClose', async () => connections.drain());
  app.setErrorHandler(errorHandler);
  registerJsonBody(app, config.bodyLimitBytes);

  // Loaded only when traces are on: without them no module of OpenTelemetry is (tracing/start.ts).
  if (services.tracing) await app.register((await import('./plugins/trace.js')).tracePlugin);
  await app.register(requestLogPlugin, { metrics });
  await app.register(lifecyclePlugin, { dispatcher: services.dispatcher, hub: services.feed.hub });
  // Before the contract: a preflight is answered here, not as an OPTIONS the contract would 405.
  await app.register(corsPlugin, { origins: config.corsOrigins, doc });
  await app.register(contractPlugin, { doc });
  // After routing (404/405 first), before every route's own credential check.
  await registerOverloadGuard(app, config, store, metrics.overloaded);
  await app.register(authPlugin, { config, verifiers: services.verifiers, metrics });

  await app.register(metricsListenerPlugin, {
    registry: metrics.registry,
    port: config.metricsPort,
    host: config.metricsHost ?? config.host,
    timeouts: config,
  });

  await app.register(plantRoutes, {
    store,
    tracing: services.tracing,
    batchBodyLimit: config.batchBodyLimitBytes,
  });
  await app.register(changeRoutes, { feed: services.feed, streams: changeStreams(services) });
  await app.register(ticketRoutes, { store: services.store });
  await app.register(operationsRoutes, { store, doc, metrics });
  await app.register(docsRoutes);
  await app.register(consoleRoutes);
  app.checkEveryOperationHandled();
  return app;
}
