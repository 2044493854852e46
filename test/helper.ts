// The app built in-process, the way fastify/demo's `build(t)` does it: the same services and
// plugins as `plant-store serve`, on a fresh store of either kind, with requests sent through
// `app.inject` and every response checked against the OpenAPI document. Spawn the built server
// (support/server.ts) only where the process itself is under test.
import { after, before } from 'node:test';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Env } from '../src/config/config.js';
import { buildApp } from '../src/http/app.js';
import { logStoreChanges } from '../src/http/server.js';
import { createLogger } from '../src/log.js';
import { createServices, type Services } from '../src/services.js';
import type { Store } from '../src/store/store.js';
import { bootstrapToken } from '../src/use-cases/bootstrap-token.js';
import { assertConforms, rawResponse, type RawRequest, type RawResponse } from './support/http.js';
import { newToken } from './support/server.js';
import { createTestStore, storeKindOf, type StoreKind, type TestStore } from './support/stores.js';

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  store: StoreKind;
  databaseUrl: string;
  /** A token with every scope, registered the way PLANT_STORE_TOKEN is. */
  token: string;
  /** The log lines written so far (JSON), when built with `logs: true`. */
  logs: string[];
  /** One request through `app.inject`; the response is checked against the document. */
  inject(req: RawRequest): Promise<RawResponse>;
  /** Listens on an ephemeral port of 127.0.0.1, for tests that need real sockets; resolves to the base URL. */
  listen(): Promise<string>;
  /** Closes the app and its services, and drops the store when this app created it. */
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** A fresh store of this kind (sqlite by default), dropped on close. */
  store?: StoreKind;
  /** Serve an existing store instead (it outlives the app). */
  databaseUrl?: string;
  /** A store object already open (tests that plant faults in it); the test closes it. */
  storeObject?: Store;
  /** Settings, as environment variables; LOG_LEVEL is silent unless `logs` is set, the event-loop bound off. */
  env?: Env;
  /** Capture log lines (at info level unless env says otherwise) in `logs`. */
  logs?: boolean;
  token?: string;
  /** Send webhooks only once `listen()` is called, as `plant-store serve` does (tests of that). */
  webhooksOnListen?: boolean;
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const owned: TestStore | undefined = options.databaseUrl ? undefined : createTestStore(options.store ?? 'sqlite');
  const databaseUrl = options.databaseUrl ?? owned!.databaseUrl;
  const logs: string[] = [];
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: options.logs ? 'info' : 'silent',
    // The test shares the app's event loop, and its own synchronous work (loading modules,
    // building another app) would trip the event-loop bound; the overload suite sets it.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...options.env,
  });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const services = await createServices(config, {
    log: createLogger(config.logLevel, sink),
    ...(options.storeObject && { store: options.storeObject }),
  });
  // What `serve` logs of the store (a standby left out, a new primary), logged here too.
  logStoreChanges(services);
  const token = options.token ?? newToken();
  await bootstrapToken(services.store, token);
  const app = await buildApp(services);
  await app.ready();
  // Served through inject, the app never listens: the dispatcher starts here (lifecycle.ts).
  if (!options.webhooksOnListen) services.dispatcher.start();
  let closed = false;
  return {
    app,
    services,
    store: storeKindOf(databaseUrl),
    databaseUrl,
    token,
    logs,
    async inject(req) {
      const res = await app.inject({
        method: (req.method ?? 'GET') as 'GET',
        url: req.path,
        headers: req.headers ?? {},
        ...(req.body !== undefined && { payload: req.body }),
      });
      const headers = Object.fromEntries(
        Object.entries(res.headers).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v]),
      );
      const response = rawResponse(res.statusCode, headers, res.body);
      assertConforms(req.method ?? 'GET', req.path, response);
      return response;
    },
    async listen() {
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      return address;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      if (!options.storeObject) await services.close();
      await owned?.drop();
    },
  };
}

/**
 * For a describe: builds the app before its tests and closes it after them. The getter throws
 * until `before` has run.
 */
export function useTestApp(options: TestAppOptions | (() => TestAppOptions) = {}): { readonly app: TestApp } {
  let built: TestApp | undefined;
  before(async () => {
    built = await buildTestApp(typeof options === 'function' ? options() : options);
  });
  after(async () => {
    await built?.close();
  });
  return {
    get app() {
      if (!built) throw new Error('the test app has not been built yet');
      return built;
    },
  };
}
