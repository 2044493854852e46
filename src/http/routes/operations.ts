import type { FastifyInstance } from 'fastify';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ApiDocument } from '../../openapi/document.js';
import type { Store } from '../../store/store.js';

interface Deps {
  store: Store;
  doc: ApiDocument;
  metrics: Metrics;
}

/** The operator's operations: liveness, readiness, the document itself, metrics. */
export async function operationsRoutes(app: FastifyInstance, { store, doc, metrics }: Deps): Promise<void> {
  app.operation('getLiveness', async () => ({ status: 'ok' }));

  app.operation('getReadiness', async () => {
    try {
      return { status: 'ok', ...(await store.ping()) };
    } catch (err) {
      throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(err);
    }
  });

  // Serialised once: the document does not change while the process runs.
  const document = JSON.stringify(doc.raw);
  app.operation(
    'getOpenApiDocument',
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(document),
    { rawResponse: true },
  );

  // Prometheus text format; on the API port it needs a token with metrics:read.
  const { registry } = metrics;
  app.operation(
    'getMetrics',
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
    {
      rawResponse: true,
    },
  );
}
