import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fp from 'fastify-plugin';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

function error(res: import('node:http').ServerResponse, status: number, message: string, headers = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: status, message }));
}

/**
 * The optional credential-free listener (METRICS_PORT): `GET /metrics` and nothing else, for a
 * Prometheus scraper on a private network. The API port keeps requiring `metrics:read`.
 */
export async function startMetricsServer(registry: Registry, port: number, host: string): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics')
      return error(res, 404, `no route for ${req.method} ${path}; only GET /metrics is served here`);
    if (req.method !== 'GET') return error(res, 405, `${req.method} is not allowed on /metrics`, { allow: 'GET' });
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(text);
      },
      () => error(res, 500, 'the metrics could not be collected'),
    );
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.listen(port, host);
  await once(server, 'listening');
  const { address, port: bound } = server.address() as AddressInfo;
  const shown =
    address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${shown}:${bound}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The credential-free metrics listener, once the app is ready, when METRICS_PORT is set. */
    metricsListener: MetricsServer | undefined;
  }
}

/** Starts the METRICS_PORT listener with the app and stops it with the app. */
export const metricsListenerPlugin = fp<{ registry: Registry; port: number | undefined; host: string }>(
  async (app, { registry, port, host }) => {
    app.decorate('metricsListener', undefined);
    if (port === undefined) return;
    app.addHook('onReady', async () => {
      app.metricsListener = await startMetricsServer(registry, port, host);
      app.log.info({ url: `${app.metricsListener.url}/metrics` }, 'metrics listening (no credential needed)');
    });
    app.addHook('onClose', async () => app.metricsListener?.close());
  },
  { name: 'metrics-listener' },
);
