import type { Logger } from 'pino';
import { createJwtVerifier } from './auth/jwt.js';
import { cachedTokenLookup } from './auth/token-cache.js';
import type { Verifiers } from './auth/verify-bearer.js';
import { jwtConfig, type Config } from './config/config.js';
import { Dispatcher } from './events/dispatcher.js';
import { createWebhookMetrics } from './events/metrics.js';
import { createLogger } from './log.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { loadDocument, type ApiDocument } from './openapi/document.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';

/** Everything the HTTP app and the commands work with, built once per process from its config. */
export interface Services {
  config: Config;
  log: Logger;
  store: Store;
  /** Schema migrations applied when the store was opened. */
  migrated: number;
  /** The OpenAPI document: routes, validation and serialisation come from it. */
  doc: ApiDocument;
  metrics: Metrics;
  /** How bearer tokens are checked: managed tokens (cached look-ups), and JWTs in JWT mode. */
  verifiers: Verifiers;
  /** Delivers the webhook outbox; started and stopped by whoever serves (the HTTP app). */
  dispatcher: Dispatcher;
  /** Closes the store; the dispatcher must have been stopped. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  log?: Logger;
  /** A store already open (tests that plant faults in it); otherwise DATABASE_URL's is opened. */
  store?: Store;
}

/** Builds the services of `serve`, of every command and of the tests, the same way for all. */
export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const log = options.log ?? createLogger(config.logLevel);
  const { store, migrated } = options.store ? { store: options.store, migrated: 0 } : await openStore(config);
  try {
    const jwt = jwtConfig(config);
    const metrics = createMetrics(store);
    const verifiers: Verifiers = {
      findToken: cachedTokenLookup(store),
      verifyJwt: jwt && (await createJwtVerifier(jwt)),
    };
    const dispatcher = new Dispatcher(store, config, log, createWebhookMetrics(metrics.registry, store));
    const doc = loadDocument();
    return { config, log, store, migrated, doc, metrics, verifiers, dispatcher, close: () => store.close() };
  } catch (err) {
    await store.close();
    throw err;
  }
}
