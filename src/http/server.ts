import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { StoreUnavailableError } from '../domain/errors.js';
import { discardIfNew, type Services } from '../services.js';
import { bootstrapToken } from '../use-cases/bootstrap-token.js';
import { buildApp } from './app.js';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** Drains in-flight requests, stops the dispatcher and the metrics listener, closes the store. */
  close(): Promise<void>;
}

/**
 * Builds the app and listens. PLANT_STORE_TOKEN is registered before; the first token is generated
 * only once the server listens, so a start that fails (its port taken) has shown no token that
 * the next start would not show again. Such a start also removes the store it created, when that
 * still holds nothing.
 */
export async function startServer(services: Services): Promise<RunningServer> {
  const { config, log } = services;
  if (services.migrated > 0) log.info({ migrated: services.migrated }, 'store schema migrated');
  if (services.store.notice) log.warn(services.store.notice);
  logStoreChanges(services);
  if (config.bootstrapToken !== undefined) await ensureToken(services);

  const app = await buildApp(services);
  let address: string;
  try {
    address = await app.listen({
      port: config.port,
      host: config.host,
      listenTextResolver: (a) => `listening on ${a}`,
    });
  } catch (err) {
    await app.close().catch(() => undefined);
    await discardIfNew(services.store).catch(() => undefined);
    throw err;
  }
  const url = address.replace('://0.0.0.0:', '://127.0.0.1:');
  if (config.bootstrapToken === undefined) await ensureToken(services, (app.server.address() as AddressInfo).port);
  if (config.jwtJwksUrl || config.jwtJwksFile) {
    log.info({ issuer: config.jwtIssuer, audience: config.jwtAudience }, 'JWT mode on');
  }
  log.info({ url, store: config.databaseUrl.split(':')[0] }, 'plant-store listening');
  // The store closes once the app has: its onClose hooks (Fastify runs the last added first, so
  // one added here would run before the plugins') stop the dispatcher, which records the
  // attempts it cut short, and the change log's hub, which reads the store until then.
  const close = async () => {
    await app.close();
    await services.close();
  };
  return { app, url, close };
}

/**
 * Logs the store's changes of primary and of usable standbys. Its own function so that the tests'
 * in-process app (test/helper.ts) logs them as `serve` does.
 */
export function logStoreChanges({ store, log }: Services): void {
  store.watchPrimary?.((primary, previous) => {
    if (previous !== undefined)
      log.warn({ primary, previous }, 'the database primary changed: writes go to the new one');
  });
  store.watchStandbys?.(({ host, usable, why }) => {
    if (usable) log.info({ standby: host }, 'a standby serves reads again');
    else log.warn({ standby: host, why }, `a standby is left out of the reads: ${why}`);
  });
}

/** PLANT_STORE_TOKEN registered, or (at `port`) the first token generated and shown, when the store has none. */
async function ensureToken(services: Services, port?: number): Promise<void> {
  const { config, log, store } = services;
  try {
    const bootstrap = await bootstrapToken(store, config.bootstrapToken);
    if (bootstrap.kind === 'generated') announceToken(bootstrap.token, port ?? config.port);
    if (bootstrap.kind === 'registered') log.info('registered PLANT_STORE_TOKEN as an API token');
  } catch (err) {
    // A store that cannot take writes now (a full disk) must not stop the server: it serves
    // what it can, /readyz says why not the rest, and the token is made at the next start.
    if (!(err instanceof StoreUnavailableError)) throw err;
    log.error({ err }, 'could not register the bootstrap token; the store cannot take writes');
  }
}

/** The first token is printed once, on stderr, where logs to stdout cannot bury it. */
function announceToken(token: string, port: number): void {
  process.stderr.write(
    `\nplant-store: created the first API token (all scopes). It is shown only this once:\n\n    ${token}\n\n` +
      `Try: curl -H "Authorization: Bearer ${token}" -H 'content-type: application/json' ` +
      // The quick start's plant: trying both, or this and then the README's session, conflicts with nothing.
      `-d '{"id":9223372036854775807,"name":"Monstera"}' http://localhost:${port}/plants\n` +
      `Or open http://localhost:${port}/docs, press Authorize and paste it.\n\n`,
  );
}

/**
 * The signals that stop `plant-store serve`, each the same way: drain, close the store, exit 0.
 * SIGHUP (the terminal that ran it closed) reloads nothing: settings are read once, at start.
 */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * The process of `plant-store serve`: listen; on a stop signal, drain, log "stopped" once the store
 * is closed, and exit 0. A signal while draining (npm passes a terminal's Ctrl-C on, so the server
 * gets SIGINT twice) is logged and changes nothing: SHUTDOWN_TIMEOUT_MS bounds the drain.
 */
export async function serve(services: Services): Promise<void> {
  const server = await startServer(services);
  const { log } = services;
  // The log is written asynchronously: what is under way is written, in order, before the exit;
  // a log reader that has stopped reading (without going away) gets a second.
  const exit = (code: number) => {
    process.exitCode = code;
    log.flush(() => process.exit(code));
    setTimeout(() => process.exit(code), 1_000);
  };
  let stopping: NodeJS.Signals | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.info({ signal }, `already shutting down (${stopping}): still draining`);
      return;
    }
    stopping = signal;
    log.info({ signal }, 'shutting down: draining in-flight requests');
    const deadline = setTimeout(() => {
      log.error('in-flight requests did not finish in time; exiting');
      exit(1);
    }, services.config.shutdownTimeoutMs);
    deadline.unref();
    server.close().then(
      () => {
        log.info({ signal }, 'stopped');
        exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => stop(signal));
}
