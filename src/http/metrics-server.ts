import { once } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fp from 'fastify-plugin';
import type { Registry } from 'prom-client';
import { failedPrecondition, type FailedPrecondition } from '../domain/preconditions.js';
import { refusalWithoutEtag } from './headers/conditional-untagged.js';
import { preconditions } from './headers/conditional.js';
import { guardConnections, IN_PROCESS_PER_CONNECTION } from './connections/connections.js';
import { clientErrorHandler, refuseConnect } from './errors/client-errors.js';
import { writeError } from './errors/error-body.js';
import { answerExpect } from './connections/expect.js';
import { declaresBody, hostProblem } from './headers/header-checks.js';
import { HttpError } from './errors/http-error.js';
import { requestId } from './connections/request-id.js';

// Not an ESM import, whose facade would load undici at start: see error-body.ts.
const { createServer } = process.getBuiltinModule('node:http');

export interface MetricsServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * This listener's Error answers: `application/json` without the charset parameter, as it has
 * always said them (JSON is UTF-8 either way, RFC 8259 8.1).
 */
function error(res: ServerResponse, status: number, message: string, headers = {}): void {
  writeError(res, status, message, { 'content-type': 'application/json', ...headers });
}

/** Like the API port: an x-request-id on every response; a body is never read (none is taken) nor waited for. */
function prepare(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('x-request-id', requestId(req));
  if (declaresBody(req.headers) && !req.complete) res.setHeader('connection', 'close');
}

/**
 * The optional credential-free listener (METRICS_PORT): `GET /metrics` (and HEAD) and nothing else,
 * for a Prometheus scraper on a private network. The API port keeps requiring `metrics:read`.
 */
/** The slow-client time-outs of the API port, which this listener keeps too. */
export interface ListenerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export async function startMetricsServer(
  registry: Registry,
  port: number,
  host: string,
  timeouts: ListenerTimeouts,
): Promise<MetricsServer> {
  const options = {
    requireHostHeader: false,
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    // As on the API port: Node checks the first two only this often (30 s by default).
    connectionsCheckingInterval: 1000,
  };
  const server: Server = createServer(options, (req, res) => {
    prepare(req, res);
    const problem = hostProblem(req);
    if (problem !== undefined) return error(res, 400, problem, { connection: 'close' });
    const path = (req.url ?? '').split('?')[0] ?? '';
    // Error messages are one line of at most 1024 characters; a path can be far longer.
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    if (path !== '/metrics')
      return error(res, 404, `no route for ${req.method} ${shown}; only GET (and HEAD) /metrics is served here`);
    // HEAD wherever GET, as on the API port: GET's status and headers; Node sends no body for it.
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return error(res, 405, `${req.method} is not allowed on /metrics`, { allow: 'GET, HEAD' });
    }
    // As on the API port: a parameter the operation does not take is refused, not ignored.
    const query = (req.url ?? '').slice(path.length + 1);
    if (query !== '') {
      const names = [...new Set(query.split('&').map((p) => p.split('=')[0] ?? ''))].slice(0, 5);
      const listed = names.map((n) => JSON.stringify(n.length > 40 ? `${n.slice(0, 40)}…` : n)).join(', ');
      return error(res, 400, `unknown query parameter(s) ${listed}: GET /metrics takes no query parameters`);
    }
    // As on the API port (conditional-untagged.ts): the metrics have no ETag, and only `*`
    // names them; the conditions are answered only once the metrics could be collected.
    let failed: FailedPrecondition | undefined;
    try {
      const conditions = preconditions(req.headers);
      failed = conditions && failedPrecondition(conditions, undefined);
    } catch (err) {
      return error(res, 400, (err as HttpError).message);
    }
    registry.metrics().then(
      (text) => {
        if (failed === 'If-Match') return error(res, 412, refusalWithoutEtag('/metrics', failed).message);
        if (failed === 'If-None-Match') {
          res.writeHead(304).end();
          return;
        }
        // Its length, rather than chunks, so that HEAD tells it too.
        res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text) });
        res.end(text);
      },
      () => error(res, 500, 'the metrics could not be collected'),
    );
  });
  server.on('clientError', clientErrorHandler);
  answerExpect(server);
  server.on('connect', refuseConnect);
  // A scraper sends one request at a time: one in process, none waiting.
  const connections = guardConnections(server, { maxPipelined: IN_PROCESS_PER_CONNECTION });
  server.listen(port, host);
  await once(server, 'listening');
  const { address, port: bound } = server.address() as AddressInfo;
  const shown =
    address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${shown}:${bound}`,
    server,
    close: () =>
      new Promise((resolve) => {
        connections.drain();
        server.close(() => resolve());
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
export const metricsListenerPlugin = fp<{
  registry: Registry;
  port: number | undefined;
  host: string;
  timeouts: ListenerTimeouts;
}>(
  async (app, { registry, port, host, timeouts }) => {
    app.decorate('metricsListener', undefined);
    if (port === undefined) return;
    app.addHook('onReady', async () => {
      app.metricsListener = await startMetricsServer(registry, port, host, timeouts);
      app.log.info({ url: `${app.metricsListener.url}/metrics` }, 'metrics listening (no credential needed)');
    });
    app.addHook('onClose', async () => app.metricsListener?.close());
  },
  { name: 'metrics-listener' },
);
