import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReadHost, Store, StoreHealth } from '../store/store.js';

/** Label of requests that matched no operation (404, 405): raw URLs would make labels without bound. */
export const NO_ROUTE = 'none';

/** Seconds; from a fast cached read to a slow client, around the 10 ms p99 target. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** How long a plant count is reused: counting a million rows costs milliseconds on the event loop. */
const COUNT_TTL_MS = 1_000;

export interface Metrics {
  registry: Registry;
  /** One finished request: `route` is the operation's path template, or NO_ROUTE. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  storeError(): void;
  rateLimited(limit: 'token' | 'auth_failure'): void;
  overloaded(reason: string): void;
}

/**
 * The service's Prometheus metrics: requests and latency by route and status,
 * the store (plants held, errors, group commits, write backlog), refusals by the rate limits
 * and the overload guard, and Node's own process and event-loop figures. Store figures are
 * read when scraped, so the request path pays only for a counter and a histogram.
 */
export function createMetrics(store: Store): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'plant_store_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'plant_store_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route template and status.',
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: 'plant_store_store_errors_total',
    help: 'Requests that failed because the store was unavailable (answered 503).',
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'plant_store_rate_limited_total',
    help: 'Requests refused with 429, by limit: token (requests per token) or auth_failure (refused credentials per address).',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  const overloaded = new Counter({
    name: 'plant_store_overload_rejections_total',
    help: 'Requests refused with 503 because the server was over an overload bound, by reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });

  let counted: { value: number; at: number } | undefined;
  new Gauge({
    name: 'plant_store_plants',
    help: `Plants in the store (counted when scraped, at most every ${COUNT_TTL_MS / 1000} s).`,
    registers: [registry],
    async collect() {
      if (!counted || Date.now() - counted.at > COUNT_TTL_MS) {
        counted = { value: await store.plants.count(), at: Date.now() };
      }
      this.set(counted.value);
    },
  });

  // One ping for both gauges that read it, at most every COUNT_TTL_MS; undefined: not ready.
  let pinged: { health: Promise<StoreHealth | undefined>; at: number } | undefined;
  const ping = () => {
    if (!pinged || Date.now() - pinged.at > COUNT_TTL_MS) {
      pinged = { health: store.ping().catch(() => undefined), at: Date.now() };
    }
    return pinged.health;
  };
  new Gauge({
    name: 'plant_store_store_writable',
    help: `1 when the store is reachable and can take writes (room on its disk, not a standby), else 0; as /readyz.`,
    registers: [registry],
    async collect() {
      this.set((await ping()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'plant_store_database_primary',
    help: 'PostgreSQL: 1 for the host (as DATABASE_URL names it) that is the primary, which writes go to; none while no host answers as one. As /readyz.',
    labelNames: ['host'] as const,
    registers: [registry],
    async collect() {
      const primary = (await ping())?.primary;
      this.reset();
      if (primary !== undefined) this.set({ host: primary }, 1);
    },
  });

  new Gauge({
    name: 'plant_store_store_pending_writes',
    help: 'Writes accepted by the store and not yet committed.',
    registers: [registry],
    collect() {
      this.set(store.pendingWrites());
    },
  });

  // Totals kept by the store itself: copied into the counters at each scrape.
  const totals = (name: string, help: string, pick: (s: { commits: number; writes: number }) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(pick(store.writeStats()));
      },
    });
  totals(
    'plant_store_store_commits_total',
    'Group commits since start: SQLite, WAL fsyncs; PostgreSQL, write transactions.',
    (s) => s.commits,
  );
  totals('plant_store_store_committed_writes_total', 'Writes carried by those commits.', (s) => s.writes);
  readHostMetrics(registry, store);

  return {
    registry,
    observeRequest(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    storeError: () => storeErrors.inc(),
    rateLimited: (limit) => rateLimited.inc({ limit }),
    overloaded: (reason) => overloaded.inc({ reason }),
  };
}

/**
 * Where reads go (PostgreSQL: the primary and each standby of DATABASE_READ_URL), copied from the
 * store at each scrape: reads sent to each host, and each standby's lag and usability.
 */
function readHostMetrics(registry: Registry, store: Store): void {
  new Counter({
    name: 'plant_store_store_reads_total',
    help: 'Reads of plants and of the change log sent to each database, by host and role (primary, standby).',
    labelNames: ['host', 'role'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const h of store.readHosts()) this.inc({ host: h.host, role: h.role }, h.reads);
    },
  });
  const standbys = (help: string, name: string, value: (h: ReadHost) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['host'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const h of store.readHosts()) if (h.role === 'standby') this.set({ host: h.host }, value(h));
      },
    });
  standbys(
    'How far each standby is behind the primary, in seconds (+Inf until it has been seen to have caught up).',
    'plant_store_store_standby_lag_seconds',
    (h) => (h.lagMs ?? Infinity) / 1000,
  );
  standbys(
    'Whether reads may go to each standby: 1 when reachable, a standby of this primary (in recovery, its system identifier) and within DATABASE_READ_MAX_LAG, else 0.',
    'plant_store_store_standby_usable',
    (h) => (h.usable ? 1 : 0),
  );
}
