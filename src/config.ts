import { isWellFormedToken, parseDuration } from './auth/tokens.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** A PostgreSQL schema name for `?schema=`: a plain lower-case identifier, so it never needs quoting. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The URL as it may appear in an error line: never with its password, even one holding / or @. */
const redactPassword = (url: string) => url.replace(/\/\/.*@/, '//***@');

export interface StoreConfig {
  databaseUrl: string;
  /** Most connections one process holds to PostgreSQL (unused by SQLite). */
  poolSize: number;
}

/** Webhook delivery (PRODUCT.md §6); `webhook add` reads allowPrivate too. */
export interface WebhookConfig {
  /** Subscriber URLs may resolve to loopback, private and link-local addresses (off: SSRF guard). */
  allowPrivate: boolean;
  /** Deliveries are retried until this long after the event, then given up. */
  retryWindowMs: number;
  /** One attempt's whole time: connect, send, answer. */
  timeoutMs: number;
  /** First retry delay and the cap of exponential backoff (full jitter between). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How often the dispatcher looks for due deliveries (local writes wake it sooner). */
  pollIntervalMs: number;
  /** Most attempts in flight per process. */
  concurrency: number;
  /** 32 bytes: endpoint secrets are stored encrypted with AES-256-GCM under it; undefined: stored as is. */
  secretKey: Buffer | undefined;
}

export interface Config extends StoreConfig {
  webhooks: WebhookConfig;
  port: number;
  host: string;
  logLevel: LogLevel;
  bootstrapToken: string | undefined;
  bodyLimit: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** JWT mode (PRODUCT.md §4): on when a JWKS URL or file is set. */
  jwt: JwtConfig | undefined;
  /** Requests per token per rate-limit window; 0 turns the limit off. */
  rateLimitPerToken: number;
  /** Refused credentials per client address per window; past it, 429 until the window ends. 0 is off. */
  authFailureLimit: number;
  rateLimitWindowMs: number;
  /** Where limits are counted when instances share them; undefined: in each process. */
  redisUrl: string | undefined;
  /** A second listener serving GET /metrics without a credential; undefined: none. */
  metricsPort: number | undefined;
  metricsHost: string;
  /** Overload bounds: past them requests get 503 with Retry-After (0 turns a bound off). */
  maxEventLoopDelayMs: number;
  maxWriteBacklog: number;
}

export interface JwtConfig {
  /** Exactly one of the two: keys fetched (and refreshed) from a URL, or read once from a file. */
  jwksUrl: string | undefined;
  jwksFile: string | undefined;
  issuer: string;
  audience: string;
  /** Least time between two fetches of the JWKS: bounds refreshes forced by unknown `kid`s. */
  jwksCooldownMs: number;
}

/** `serve` flags that stand for environment variables; a flag wins over its variable. */
export interface ServeFlags {
  port?: string;
  host?: string;
  jwksUrl?: string;
  jwksFile?: string;
  issuer?: string;
  audience?: string;
}

const FLAG_VARIABLES: Record<keyof ServeFlags, string> = {
  port: 'PORT',
  host: 'HOST',
  jwksUrl: 'JWT_JWKS_URL',
  jwksFile: 'JWT_JWKS_FILE',
  issuer: 'JWT_ISSUER',
  audience: 'JWT_AUDIENCE',
};

/** A configuration value that stops the process; its message is the one line the operator sees. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

// Each reader takes one setting and either returns its typed value or throws the one line
// that names it. Empty counts as unset, as shells make it easy to export an empty variable.
function int(env: Env, name: string, min: number, max: number, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = /^[0-9]+$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${v}")`);
  return n;
}

function databaseUrlProblem(url: string): string | undefined {
  if (url === 'sqlite::memory:') return 'sqlite::memory: is not durable; give a file path';
  if (/^sqlite:.+/.test(url)) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) return 'must be sqlite:<path> or postgres://user@host:port/database';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid postgres:// URL';
  }
  const schema = parsed.searchParams.get('schema');
  if (schema !== null && !SCHEMA_NAME.test(schema)) {
    return 'schema= must be a lower-case identifier (a-z, 0-9, _; at most 63 characters)';
  }
  return undefined;
}

function databaseUrl(env: Env): string {
  const url = env.DATABASE_URL || 'sqlite:./data/plant-store.db';
  const problem = databaseUrlProblem(url);
  if (problem === undefined) return url;
  throw new ConfigError(`DATABASE_URL ${problem} (got "${redactPassword(url)}")`);
}

function logLevel(env: Env): LogLevel {
  const level = env.LOG_LEVEL || 'info';
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${level}")`);
}

function bootstrapToken(env: Env): string | undefined {
  const v = env.PLANT_STORE_TOKEN;
  if (v === undefined || (v.length >= 20 && isWellFormedToken(v))) return v;
  throw new ConfigError(
    'PLANT_STORE_TOKEN must be 20 to 512 characters of A-Z a-z 0-9 - . _ ~ + / (optionally ending in =)',
  );
}

function optionalInt(env: Env, name: string, min: number, max: number): number | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : int(env, name, min, max, 0);
}

/** http(s) only; plain http only to this machine, where nobody can swap the keys on the way. */
function jwksUrl(v: string): string {
  let url: URL | undefined;
  try {
    url = new URL(v);
  } catch {
    url = undefined;
  }
  const local = url && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url && (url.protocol === 'https:' || (url.protocol === 'http:' && local))) return url.href;
  throw new ConfigError(`JWT_JWKS_URL must be an https:// URL (http:// only for localhost) (got "${v}")`);
}

function metricsPort(env: Env): number | undefined {
  const port = optionalInt(env, 'METRICS_PORT', 0, 65535);
  if (port === undefined || port === 0 || port !== int(env, 'PORT', 0, 65535, 3000)) return port;
  throw new ConfigError(`METRICS_PORT must differ from PORT (both ${port}): it is a second listener`);
}

function jwt(env: Env): JwtConfig | undefined {
  const url = env.JWT_JWKS_URL || undefined;
  const file = env.JWT_JWKS_FILE || undefined;
  const issuer = env.JWT_ISSUER || undefined;
  const audience = env.JWT_AUDIENCE || undefined;
  if (!url && !file) {
    if (issuer || audience) throw new ConfigError('JWT_ISSUER and JWT_AUDIENCE need JWT_JWKS_URL or JWT_JWKS_FILE');
    return undefined;
  }
  if (url && file) throw new ConfigError('JWT_JWKS_URL and JWT_JWKS_FILE exclude each other; set one');
  if (!issuer) throw new ConfigError('JWT_ISSUER is required in JWT mode (the "iss" tokens must carry)');
  if (!audience) throw new ConfigError('JWT_AUDIENCE is required in JWT mode (the "aud" tokens must carry)');
  return {
    jwksUrl: url && jwksUrl(url),
    jwksFile: file,
    issuer,
    audience,
    jwksCooldownMs: int(env, 'JWT_JWKS_COOLDOWN_MS', 0, 3_600_000, 30_000),
  };
}

function redisUrl(env: Env): string | undefined {
  const v = env.REDIS_URL || undefined;
  if (v === undefined || /^rediss?:\/\/[^\s]+$/.test(v)) return v;
  throw new ConfigError(
    `REDIS_URL must be redis://[user:password@]host[:port][/db] or rediss://… (got "${v.replace(/\/\/[^@/]*@/, '//***@')}")`,
  );
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(`${name} must be true or false (got "${v}")`);
}

function duration(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const ms = parseDuration(v);
  if (ms === undefined) throw new ConfigError(`${name} must look like 24h, 90m, 3600s, 7d or 2w (got "${v}")`);
  return ms;
}

function secretKey(env: Env): Buffer | undefined {
  const v = env.WEBHOOK_SECRET_KEY;
  if (v === undefined || v === '') return undefined;
  const key = /^[A-Za-z0-9+/]+=*$/.test(v) ? Buffer.from(v, 'base64') : Buffer.alloc(0);
  if (key.length === 32) return key;
  throw new ConfigError('WEBHOOK_SECRET_KEY must be 32 bytes in base64 (openssl rand -base64 32)');
}

export function loadWebhookConfig(env: Env): WebhookConfig {
  return {
    allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    retryWindowMs: duration(env, 'WEBHOOK_RETRY_WINDOW', 24 * 3_600_000),
    timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 1, 600_000, 10_000),
    backoffBaseMs: int(env, 'WEBHOOK_BACKOFF_BASE_MS', 1, 3_600_000, 1_000),
    backoffMaxMs: int(env, 'WEBHOOK_BACKOFF_MAX_MS', 1, 86_400_000, 3_600_000),
    pollIntervalMs: int(env, 'WEBHOOK_POLL_INTERVAL_MS', 10, 60_000, 1_000),
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 1, 1000, 16),
    secretKey: secretKey(env),
  };
}

export function loadStoreConfig(env: Env): StoreConfig {
  return { databaseUrl: databaseUrl(env), poolSize: int(env, 'DATABASE_POOL_SIZE', 1, 1000, 10) };
}

/** Reads the environment once; flags (`serve --port 8080`) win over the environment. */
export function loadConfig(env: Env, flags: ServeFlags = {}): Config {
  const e: Env = { ...env };
  for (const [flag, name] of Object.entries(FLAG_VARIABLES)) {
    const value = flags[flag as keyof ServeFlags];
    if (value !== undefined) e[name] = value;
  }
  const host = e.HOST || '0.0.0.0';
  return {
    ...loadStoreConfig(e),
    webhooks: loadWebhookConfig(e),
    port: int(e, 'PORT', 0, 65535, 3000),
    host,
    logLevel: logLevel(e),
    bootstrapToken: bootstrapToken(e),
    bodyLimit: int(e, 'BODY_LIMIT_BYTES', 2, 64 * 1024 * 1024, 16 * 1024),
    headersTimeoutMs: int(e, 'HEADERS_TIMEOUT_MS', 1, 3_600_000, 10_000),
    requestTimeoutMs: int(e, 'REQUEST_TIMEOUT_MS', 1, 3_600_000, 30_000),
    keepAliveTimeoutMs: int(e, 'KEEP_ALIVE_TIMEOUT_MS', 1, 3_600_000, 5_000),
    shutdownTimeoutMs: int(e, 'SHUTDOWN_TIMEOUT_MS', 1, 3_600_000, 10_000),
    jwt: jwt(e),
    rateLimitPerToken: int(e, 'RATE_LIMIT_PER_MINUTE', 0, 1e9, 600_000),
    authFailureLimit: int(e, 'AUTH_FAILURE_LIMIT_PER_MINUTE', 0, 1e9, 60),
    rateLimitWindowMs: int(e, 'RATE_LIMIT_WINDOW_SECONDS', 1, 86_400, 60) * 1000,
    redisUrl: redisUrl(e),
    metricsPort: metricsPort(e),
    metricsHost: e.METRICS_HOST || host,
    maxEventLoopDelayMs: int(e, 'MAX_EVENT_LOOP_DELAY_MS', 0, 3_600_000, 1000),
    maxWriteBacklog: int(e, 'MAX_WRITE_BACKLOG', 0, 1e9, 10_000),
  };
}
