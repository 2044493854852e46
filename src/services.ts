import type { Logger } from 'pino';
import type { Verifiers } from './auth/verify-bearer.js';
import { jwtConfig, type Config } from './config/config.js';
import type { Dispatcher } from './events/dispatcher.js';
import type { Feed } from './feed/index.js';
import type { Metrics } from './metrics/metrics.js';
import { loadDocument, type ApiDocument } from './openapi/document.js';
import { openStore, type OpenStoreOptions } from './store/open-store.js';
import type { Store } from './store/store.js';
import { startTracing } from './tracing/start.js';
import type { Tracing } from './tracing/tracing.js';

/** What every command works with: the settings, the store and the API's document. */
export interface CommandServices {
  config: Config;
  store: Store;
  /** Schema migrations applied when the store was opened. */
  migrated: number;
  /** The OpenAPI document: routes, validation and serialisation come from it. */
  doc: ApiDocument;
  /** Closes the store (and, when serving, after the dispatcher has been stopped). */
  close(): Promise<void>;
}

/** Everything the HTTP app works with: a command's services, and what serving adds to them. */
export interface Services extends CommandServices {
  log: Logger;
  metrics: Metrics;
  /** How bearer tokens are checked: managed tokens (cached look-ups), and JWTs in JWT mode. */
  verifiers: Verifiers;
  /** Delivers the webhook outbox; started and stopped by whoever serves (the HTTP app). */
  dispatcher: Dispatcher;
  /** The change log and this instance's view of its end; the hub is started and stopped by the HTTP app. */
  feed: Feed;
  /** OpenTelemetry's spans, when an OTLP endpoint is set (tracing/start.ts); closing sends what is left. */
  tracing: Tracing | undefined;
}

export interface ServiceOptions {
  log?: Logger;
  /** A store already open (tests that plant faults in it); otherwise DATABASE_URL's is opened. */
  store?: Store;
}

/** Builds the services of every command, the same way for all. */
export async function createCommandServices(
  config: Config,
  options: Pick<ServiceOptions, 'store'> & OpenStoreOptions = {},
): Promise<CommandServices> {
  const { store, migrated } = options.store ? { store: options.store, migrated: 0 } : await openStore(config, options);
  return { config, store, migrated, doc: loadDocument(), close: () => store.close() };
}

/**
 * Builds the services of `serve` and of the tests, on top of a command's. What only serving uses
 * (logs, metrics, JWT checks, the dispatcher) is loaded here, so that a command, which starts a
 * process of its own for one task, does not load it: about a third of its start.
 */
export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const [
    { createLogger },
    { createMetrics },
    { cachedTokenLookup, rememberedTokenHashes },
    { createJwtVerifier },
    { Dispatcher },
    { createWebhookMetrics },
    { ChangeHub, plantsAsOf },
  ] = await Promise.all([
    import('./log.js'),
    import('./metrics/metrics.js'),
    import('./auth/token-cache.js'),
    import('./auth/jwt.js'),
    import('./events/dispatcher.js'),
    import('./events/metrics.js'),
    import('./feed/index.js'),
  ]);
  const log = options.log ?? createLogger(config.logLevel);
  // What can refuse a start (a JWKS file that cannot be read) is done before the store is opened.
  const jwt = jwtConfig(config);
  const verifyJwt = jwt && (await createJwtVerifier(jwt));
  const tracing = await startTracing(config, log);
  // Standbys serve reads of a serving process only: a command reads the primary.
  const standbys = config.databaseReadUrl && { url: config.databaseReadUrl, maxLagMs: config.databaseReadMaxLagMs };
  const base = await createCommandServices(config, {
    ...options,
    ...(standbys && { standbys }),
    ...(tracing && { tracing }),
  }).catch(async (err: unknown) => {
    await tracing?.shutdown();
    throw err;
  });
  const { store } = base;
  // The spans of the last requests and deliveries go out once the store has closed.
  const close = async () => {
    await base.close();
    await tracing?.shutdown();
  };
  try {
    const metrics = createMetrics(store);
    const verifiers: Verifiers = {
      findToken: cachedTokenLookup(store),
      findTicket: (hash) => store.tokens.findTicket(hash),
      verifyJwt,
      hashOf: rememberedTokenHashes(),
    };
    const dispatcher = new Dispatcher(
      store.webhooks,
      config,
      log,
      createWebhookMetrics(metrics.registry, store.webhooks),
      tracing,
    );
    const hub = new ChangeHub(store.changes, {
      retentionMs: config.changesRetentionMs,
      onError: (err, what) => log.warn({ err }, what),
    });
    return {
      ...base,
      close,
      log,
      metrics,
      verifiers,
      dispatcher,
      feed: { hub, reads: (atLeast) => store.reads(atLeast), plantsAsOf: () => plantsAsOf(store) },
      tracing,
    };
  } catch (err) {
    await discardIfNew(store);
    await tracing?.shutdown();
    throw err;
  }
}

/**
 * Closes a store whose start failed; a SQLite store this start created, and that still holds
 * nothing, is removed with its directory: a refused start leaves no file behind.
 */
export function discardIfNew(store: Store): Promise<void> {
  return store.files ? store.files.discardIfNew() : store.close();
}
