import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { bootstrapToken } from './auth/bootstrap.js';
import type { Config } from './config.js';
import { Dispatcher } from './events/dispatcher.js';
import { createWebhookMetrics } from './events/metrics.js';
import { createMetrics } from './metrics/metrics.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  url: string;
  close(): Promise<void>;
}

/** Opens the store, makes sure a token exists, and listens. */
export async function startServer(config: Config): Promise<RunningServer> {
  const { store, migrated } = await openStore(config);
  const metrics = createMetrics(store);
  const app = await buildApp({ config, store, metrics });
  const dispatcher = new Dispatcher(store, config.webhooks, app.log, createWebhookMetrics(metrics.registry, store));
  // Attempts in flight finish (each bounded by WEBHOOK_TIMEOUT_MS) before the store closes.
  app.addHook('onClose', async () => {
    await dispatcher.stop();
    await store.close();
  });
  // A change committed here may have written outbox rows: look for them now, not at the next poll.
  app.addHook('onResponse', async (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD' && reply.statusCode < 300) dispatcher.nudge();
  });
  if (migrated > 0) app.log.info({ migrated }, 'store schema migrated');

  const bootstrap = await bootstrapToken(store, config.bootstrapToken);
  if (bootstrap.kind === 'generated') announceToken(bootstrap.token, config.port);
  if (bootstrap.kind === 'registered') app.log.info('registered PLANT_STORE_TOKEN as an API token');

  if (config.metricsPort !== undefined) {
    const metricsServer = await startMetricsServer(metrics.registry, config.metricsPort, config.metricsHost);
    app.addHook('onClose', () => metricsServer.close());
    app.log.info({ url: `${metricsServer.url}/metrics` }, 'metrics listening (no credential needed)');
  }
  const address = await app.listen({
    port: config.port,
    host: config.host,
    listenTextResolver: (a) => `listening on ${a}`,
  });
  const url = address.replace('://0.0.0.0:', '://127.0.0.1:');
  dispatcher.start();
  if (config.jwt) app.log.info({ issuer: config.jwt.issuer, audience: config.jwt.audience }, 'JWT mode on');
  app.log.info({ url, store: config.databaseUrl.split(':')[0] }, 'plant-store listening');
  return { app, store, url, close: () => app.close() };
}

/** The first token is printed once, on stderr, where logs to stdout cannot bury it. */
function announceToken(token: string, port: number): void {
  process.stderr.write(
    `\nplant-store: created the first API token (all scopes). It is shown only this once:\n\n    ${token}\n\n` +
      `Try: curl -H "Authorization: Bearer ${token}" -H 'content-type: application/json' ` +
      `-d '{"id":1,"name":"Monstera"}' http://localhost:${port || 3000}/plants\n` +
      `Or open http://localhost:${port || 3000}/docs, press Authorize and paste it.\n\n`,
  );
}

/** The process entry for `plant-store serve`: listen, then drain and exit 0 on SIGTERM/SIGINT. */
export async function serve(config: Config): Promise<void> {
  const server = await startServer(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'shutting down: draining in-flight requests');
    const deadline = setTimeout(() => {
      server.app.log.error('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        server.app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
