import type { FastifyInstance } from 'fastify';
import { StoreUnavailableError } from '../../store/store.js';
import { operationRoute, type RouteDeps } from '../operation-route.js';

export function operationsRoutes(app: FastifyInstance, deps: RouteDeps): void {
  operationRoute(app, deps, 'getLiveness', async () => ({ status: 'ok' }));

  operationRoute(app, deps, 'getReadiness', async () => {
    try {
      await deps.store.ping();
    } catch (err) {
      throw new StoreUnavailableError(err);
    }
    return { status: 'ok' };
  });

  // Serialised once: the document does not change while the process runs.
  const document = JSON.stringify(deps.doc.raw);
  operationRoute(
    app,
    deps,
    'getOpenApiDocument',
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(document),
    { rawResponse: true },
  );

  // Prometheus text format; on the API port it needs a token with metrics:read.
  const { registry } = deps.metrics;
  operationRoute(
    app,
    deps,
    'getMetrics',
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
    { rawResponse: true },
  );
}
