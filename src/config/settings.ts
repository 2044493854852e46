// Every setting of the service, once: its environment variable, its `serve` flag when it has
// one, how its text is read (with its range), its default and a one-line doc. The Config type,
// the reading of the environment and of flags, `serve --help` and the settings table of docs/reference/settings.md
// are all derived from this table.
import { databaseReadUrl } from './database-read-url.js';
import { databaseUrl } from './database-url.js';
import * as p from './parse.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

interface Spec<T> {
  env: string;
  /** The `serve` option that stands for the variable and wins over it, in commander's form. */
  flag?: string;
  /** One line for `serve --help` and docs/reference/settings.md (Markdown code spans allowed). */
  doc: string;
  parse: p.Parse<T>;
  /** The default as documented, when its value alone would not say it well. */
  shown?: string;
}

/** A setting with a default: its value is always there. */
function given<T>(spec: Spec<T> & { default: T }) {
  return spec;
}

/** A setting that may stay unset: its value is undefined then, and `shown` says what that means. */
function optional<T>(spec: Spec<T> & { shown: string }) {
  return { ...spec, default: undefined as T | undefined };
}

export const SETTINGS = {
  port: given({ env: 'PORT', flag: '--port <n>', doc: 'port to listen on', default: 3000, parse: p.integer(0, 65535) }),
  host: given({
    env: 'HOST',
    flag: '--host <address>',
    doc: 'address to listen on (`127.0.0.1`: this machine only; `0.0.0.0`: every interface)',
    default: '0.0.0.0',
    parse: p.text,
  }),
  databaseUrl: given({
    env: 'DATABASE_URL',
    doc: '`sqlite:<path>`, or `postgres://user[:password]@host[:port][,…]/database[?schema=name]` (also `postgresql://`; libpq parameters; [failover](../guides/failover-and-replicas.md#failover))',
    default: 'sqlite:./data/plant-store.db',
    parse: databaseUrl,
  }),
  databasePoolSize: given({
    env: 'DATABASE_POOL_SIZE',
    doc: 'most PostgreSQL connections one process opens ([pool sizing](../guides/scaling-out.md#pool-sizing))',
    default: 10,
    parse: p.integer(1, 1000),
  }),
  databaseReadUrl: optional({
    env: 'DATABASE_READ_URL',
    doc: 'standbys that serve the reads: `postgres://user@host1:port1,host2:port2/database` ([read replicas](../guides/failover-and-replicas.md#read-replicas))',
    shown: 'none: the primary serves every read',
    parse: databaseReadUrl,
  }),
  databaseReadMaxLagMs: given({
    env: 'DATABASE_READ_MAX_LAG',
    doc: 'a standby further behind the primary than this (`2s`, `1m`) serves no read until it catches up',
    default: 5_000,
    shown: '`5s`',
    parse: p.durationLike('2s, 30s or 1m: a whole number of seconds or more, at least 1s'),
  }),
  sqliteCheckpointPages: given({
    env: 'SQLITE_CHECKPOINT_PAGES',
    doc: 'SQLite: WAL pages that pile up before a commit copies them into the database file ([trade-off](../performance.md#checkpoints))',
    default: 10_000,
    parse: p.integer(100, 1_000_000),
  }),
  bootstrapToken: optional({
    env: 'PLANT_STORE_TOKEN',
    doc: 'bootstrap token to register at start (20 to 512 characters of `A-Z a-z 0-9 - . _ ~ + /`)',
    shown: 'none: one is generated on first start',
    parse: p.bootstrapToken,
  }),
  logLevel: given({
    env: 'LOG_LEVEL',
    doc: LOG_LEVELS.map((l) => `\`${l}\``).join(', '),
    default: 'info' as (typeof LOG_LEVELS)[number],
    parse: p.oneOf(LOG_LEVELS),
  }),
  bodyLimitBytes: given({
    env: 'BODY_LIMIT_BYTES',
    doc: 'largest accepted request body',
    default: 16 * 1024,
    parse: p.integer(2, 64 * 1024 * 1024),
  }),
  batchBodyLimitBytes: given({
    env: 'BATCH_BODY_LIMIT_BYTES',
    doc: 'largest accepted body of `POST /plants/batch` (up to 1,000 operations)',
    default: 1024 * 1024,
    parse: p.integer(2, 64 * 1024 * 1024),
  }),
  headersTimeoutMs: given({
    env: 'HEADERS_TIMEOUT_MS',
    doc: 'time a client has to send the request headers',
    default: 10_000,
    parse: p.integer(1, 3_600_000),
  }),
  requestTimeoutMs: given({
    env: 'REQUEST_TIMEOUT_MS',
    doc: 'time a client has to send the whole request',
    default: 30_000,
    parse: p.integer(1, 3_600_000),
  }),
  keepAliveTimeoutMs: given({
    env: 'KEEP_ALIVE_TIMEOUT_MS',
    doc: 'idle time before a keep-alive connection is closed',
    default: 5_000,
    parse: p.integer(1, 3_600_000),
  }),
  maxPipelinedRequests: given({
    env: 'MAX_PIPELINED_REQUESTS',
    doc: 'requests one connection may have sent and not yet had answered (handled one at a time); past it, those waiting get 503 and the connection closes',
    default: 64,
    parse: p.integer(8, 100_000),
  }),
  shutdownTimeoutMs: given({
    env: 'SHUTDOWN_TIMEOUT_MS',
    doc: 'how long SIGTERM, SIGINT or SIGHUP wait for in-flight requests before exiting 1',
    default: 10_000,
    parse: p.integer(1, 3_600_000),
  }),
  corsOrigins: given({
    env: 'CORS_ORIGINS',
    doc: 'origins whose pages may call the API, comma-separated, exactly `scheme://host[:port]` (`*` refused) ([a page on its own origin](../guides/cors.md))',
    default: [] as readonly string[],
    shown: 'none: no CORS header is sent',
    parse: p.origins,
  }),
  jwtJwksUrl: optional({
    env: 'JWT_JWKS_URL',
    flag: '--jwks-url <url>',
    doc: "JWT mode: the identity provider's JWKS (`https://`; `http://` only for localhost)",
    shown: 'off',
    parse: p.jwksUrl,
  }),
  jwtJwksFile: optional({
    env: 'JWT_JWKS_FILE',
    flag: '--jwks-file <path>',
    doc: 'JWT mode with keys from a JWKS file instead of a URL (read at start)',
    shown: 'off',
    parse: p.text,
  }),
  jwtIssuer: optional({
    env: 'JWT_ISSUER',
    flag: '--issuer <iss>',
    doc: 'JWT mode: the `iss` tokens must carry; required with a JWKS',
    shown: 'none',
    parse: p.text,
  }),
  jwtAudience: optional({
    env: 'JWT_AUDIENCE',
    flag: '--audience <aud>',
    doc: 'JWT mode: the `aud` tokens must carry; required with a JWKS',
    shown: 'none',
    parse: p.text,
  }),
  jwtJwksCooldownMs: given({
    env: 'JWT_JWKS_COOLDOWN_MS',
    doc: 'least time between two JWKS fetches forced by an unknown `kid`',
    default: 30_000,
    parse: p.integer(0, 3_600_000),
  }),
  rateLimitPerWindow: given({
    env: 'RATE_LIMIT_PER_WINDOW',
    doc: 'requests per token per `RATE_LIMIT_WINDOW_SECONDS`; `0` turns the limit off',
    default: 600_000,
    parse: p.integer(0, 1e9),
  }),
  authFailureLimitPerWindow: given({
    env: 'AUTH_FAILURE_LIMIT_PER_WINDOW',
    doc: 'refused credentials per client address per `RATE_LIMIT_WINDOW_SECONDS`; `0` turns it off',
    default: 60,
    parse: p.integer(0, 1e9),
  }),
  rateLimitWindowSeconds: given({
    env: 'RATE_LIMIT_WINDOW_SECONDS',
    doc: 'the window both limits count over',
    default: 60,
    parse: p.integer(1, 86_400),
  }),
  redisUrl: optional({
    env: 'REDIS_URL',
    doc: '`redis://…` or `rediss://…`: count the limits in Redis, shared by every instance',
    shown: 'none: each instance counts alone',
    parse: p.redisUrl,
  }),
  metricsPort: optional({
    env: 'METRICS_PORT',
    doc: 'also serve `GET /metrics` without a credential on this port (`0`: any free port); must differ from `PORT`',
    shown: 'off',
    parse: p.integer(0, 65535),
  }),
  metricsHost: optional({
    env: 'METRICS_HOST',
    doc: 'where that listener binds',
    shown: '`HOST`',
    parse: p.text,
  }),
  otlpEndpoint: optional({
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    doc: 'turns traces on: the OTLP collector spans go to (`http://collector:4318`); the other standard `OTEL_*` variables apply ([traces](../guides/traces.md))',
    shown: 'off: no traces, nothing of OpenTelemetry loaded',
    parse: p.httpUrl,
  }),
  otlpTracesEndpoint: optional({
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    doc: 'turns traces on too: the whole URL spans are posted to (`http://collector:4318/v1/traces`), before `OTEL_EXPORTER_OTLP_ENDPOINT`',
    shown: 'off',
    parse: p.httpUrl,
  }),
  otelSdkDisabled: given({
    env: 'OTEL_SDK_DISABLED',
    doc: '`true`: no traces, whatever endpoint is set',
    default: false,
    parse: p.caselessBoolean,
  }),
  maxEventLoopDelayMs: given({
    env: 'MAX_EVENT_LOOP_DELAY_MS',
    doc: 'mean event-loop delay (over a second) past which requests get 503; `0` off',
    default: 1000,
    parse: p.integer(0, 3_600_000),
  }),
  maxWriteBacklog: given({
    env: 'MAX_WRITE_BACKLOG',
    doc: 'store operations waiting (SQLite: for a commit; PostgreSQL: for a connection or a batch) past which requests get 503; `0` off',
    default: 10_000,
    parse: p.integer(0, 1e9),
  }),
  webhookAllowPrivate: given({
    env: 'WEBHOOK_ALLOW_PRIVATE',
    doc: '`true`: subscriber URLs may be loopback, private or link-local addresses (checked at `webhook add` and at each connection)',
    default: false,
    parse: p.boolean,
  }),
  webhookRetryWindowMs: given({
    env: 'WEBHOOK_RETRY_WINDOW',
    doc: 'how long after its event a delivery is retried before it is given up (`90m`, `24h`, `7d`)',
    default: 24 * 3_600_000,
    shown: '`24h`',
    parse: p.duration,
  }),
  webhookTimeoutMs: given({
    env: 'WEBHOOK_TIMEOUT_MS',
    doc: "one delivery attempt's whole time (connect, send, answer)",
    default: 10_000,
    parse: p.integer(1, 600_000),
  }),
  webhookBackoffBaseMs: given({
    env: 'WEBHOOK_BACKOFF_BASE_MS',
    doc: 'first retry delay of the exponential backoff',
    default: 1_000,
    parse: p.integer(1, 3_600_000),
  }),
  webhookBackoffMaxMs: given({
    env: 'WEBHOOK_BACKOFF_MAX_MS',
    doc: 'the cap of the exponential backoff',
    default: 3_600_000,
    parse: p.integer(1, 86_400_000),
  }),
  webhookPollIntervalMs: given({
    env: 'WEBHOOK_POLL_INTERVAL_MS',
    doc: 'how often the dispatcher looks for due deliveries (writes on the same instance wake it at once)',
    default: 1_000,
    parse: p.integer(10, 60_000),
  }),
  webhookConcurrency: given({
    env: 'WEBHOOK_CONCURRENCY',
    doc: 'most delivery attempts in flight per instance, each endpoint at most its share ([webhooks](../guides/webhooks.md))',
    default: 16,
    parse: p.integer(1, 1000),
  }),
  changesRetentionMs: given({
    env: 'CHANGES_RETENTION',
    doc: 'how long the change log keeps each change for `GET /plants/changes` (`36h`, `7d`); older positions are 410 ([following the store](../guides/following-the-store.md))',
    default: 7 * 86_400_000,
    shown: '`7d`',
    parse: p.duration,
  }),
  changesMaxStreams: given({
    env: 'CHANGES_MAX_STREAMS',
    doc: 'most Server-Sent Events streams and long polls of `GET /plants/changes` on one instance; past it, 503 with `Retry-After` (each takes a descriptor: `LimitNOFILE` in the unit)',
    default: 10_000,
    parse: p.integer(1, 1_000_000),
  }),
  webhookSecretKey: optional({
    env: 'WEBHOOK_SECRET_KEY',
    doc: '32 random bytes in base64 (`openssl rand -base64 32`): endpoint secrets are stored sealed with AES-256-GCM under it',
    shown: 'none: secrets are stored as they are',
    parse: p.secretKey,
  }),
};

/** Variables that were renamed: set, they stop the process with a line naming the new one. */
export const RENAMED: Record<string, string> = {
  RATE_LIMIT_PER_MINUTE: 'RATE_LIMIT_PER_WINDOW',
  AUTH_FAILURE_LIMIT_PER_MINUTE: 'AUTH_FAILURE_LIMIT_PER_WINDOW',
};
