import { isWellFormedToken } from './auth/tokens.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export interface StoreConfig {
  databaseUrl: string;
}

export interface Config extends StoreConfig {
  port: number;
  host: string;
  logLevel: LogLevel;
  bootstrapToken: string | undefined;
  bodyLimit: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  shutdownTimeoutMs: number;
}

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

function databaseUrl(env: Env): string {
  const url = env.DATABASE_URL || 'sqlite:./data/plant-store.db';
  if (url === 'sqlite::memory:') throw new ConfigError('DATABASE_URL sqlite::memory: is not durable; give a file path');
  if (/^sqlite:.+/.test(url)) return url;
  throw new ConfigError(`DATABASE_URL must be sqlite:<path> (got "${url.replace(/\/\/[^@/]*@/, '//***@')}")`);
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

export function loadStoreConfig(env: Env): StoreConfig {
  return { databaseUrl: databaseUrl(env) };
}

/** Reads the environment once; flags (`serve --port 8080`) win over the environment. */
export function loadConfig(env: Env, flags: { port?: string; host?: string } = {}): Config {
  const e: Env = {
    ...env,
    ...(flags.port !== undefined && { PORT: flags.port }),
    ...(flags.host !== undefined && { HOST: flags.host }),
  };
  return {
    databaseUrl: databaseUrl(e),
    port: int(e, 'PORT', 0, 65535, 3000),
    host: e.HOST || '0.0.0.0',
    logLevel: logLevel(e),
    bootstrapToken: bootstrapToken(e),
    bodyLimit: int(e, 'BODY_LIMIT_BYTES', 2, 64 * 1024 * 1024, 16 * 1024),
    headersTimeoutMs: int(e, 'HEADERS_TIMEOUT_MS', 1, 3_600_000, 10_000),
    requestTimeoutMs: int(e, 'REQUEST_TIMEOUT_MS', 1, 3_600_000, 30_000),
    keepAliveTimeoutMs: int(e, 'KEEP_ALIVE_TIMEOUT_MS', 1, 3_600_000, 5_000),
    shutdownTimeoutMs: int(e, 'SHUTDOWN_TIMEOUT_MS', 1, 3_600_000, 10_000),
  };
}
