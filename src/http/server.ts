import type { FastifyInstance } from 'fastify';
import { StoreUnavailableError } from '../domain/errors.js';
import type { Services } from '../services.js';
import { bootstrapToken } from '../use-cases/bootstrap-token.js';
import { buildApp } from './app.js';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** Drains in-flight requests, stops the dispatcher and the metrics listener, closes the store. */
  close(): Promise<void>;
}

/** Makes sure a token exists, builds the app and listens. */
export async function startServer(services: Services): Promise<RunningServer> {
  const { config, log } = services;
  if (services.migrated > 0) log.info({ migrated: services.migrated }, 'store schema migrated');
  if (services.store.notice) log.warn(services.store.notice);
  try {
    const bootstrap = await bootstrapToken(services.store, config.bootstrapToken);
    if (bootstrap.kind === 'generated') announceToken(bootstrap.token, config.port);
    if (bootstrap.kind === 'registered') log.info('registered PLANT_STORE_TOKEN as an API token');
  } catch (err) {
    // A store that cannot take writes now (a full disk) must not stop the server: it serves
    // what it can, /readyz says why not the rest, and the token is made at the next start.
    if (!(err instanceof StoreUnavailableError)) throw err;
    log.error(
      { err: { message: err.message } },
      'could not register the bootstrap token; the store cannot take writes',
    );
  }

  const app = await buildApp(services);
  app.addHook('onClose', () => services.close());
  const address = await app.listen({
    port: config.port,
    host: config.host,
    listenTextResolver: (a) => `listening on ${a}`,
  });
  const url = address.replace('://0.0.0.0:', '://127.0.0.1:');
  if (config.jwtJwksUrl || config.jwtJwksFile) {
    log.info({ issuer: config.jwtIssuer, audience: config.jwtAudience }, 'JWT mode on');
  }
  log.info({ url, store: config.databaseUrl.split(':')[0] }, 'plant-store listening');
  return { app, url, close: () => app.close() };
}

/** The first token is printed once, on stderr, where logs to stdout cannot bury it. */
function announceToken(token: string, port: number): void {
  process.stderr.write(
    `\nplant-store: created the first API token (all scopes). It is shown only this once:\n\n    ${token}\n\n` +
      `Try: curl -H "Authorization: Bearer ${token}" -H 'content-type: application/json' ` +
      // The quick start's plant: trying both, or this and then README's session, conflicts with nothing.
      `-d '{"id":9223372036854775807,"name":"Monstera"}' http://localhost:${port || 3000}/plants\n` +
      `Or open http://localhost:${port || 3000}/docs, press Authorize and paste it.\n\n`,
  );
}

/** The process of `plant-store serve`: listen, then drain and exit 0 on SIGTERM/SIGINT. */
export async function serve(services: Services): Promise<void> {
  const server = await startServer(services);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    services.log.info({ signal }, 'shutting down: draining in-flight requests');
    const deadline = setTimeout(() => {
      services.log.error('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, services.config.shutdownTimeoutMs);
    deadline.unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        services.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
