import { z } from 'zod';
import { isWellFormedToken } from './auth/tokens.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const int = (name: string, min: number, max: number, fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = /^[0-9]+$/.test(v) ? Number(v) : NaN;
      if (!(n >= min && n <= max)) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer from ${min} to ${max} (got "${v}")` });
        return z.NEVER;
      }
      return n;
    });

/** A PostgreSQL schema name for `?schema=`: a plain lower-case identifier, so it never needs quoting. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The URL as it may appear in an error line: never with its password, even one holding / or @. */
const redactPassword = (url: string) => url.replace(/\/\/.*@/, '//***@');

function databaseUrlProblem(url: string): string | undefined {
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

const databaseUrl = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const url = v === undefined || v === '' ? 'sqlite:./data/plant-store.db' : v;
    const problem = databaseUrlProblem(url);
    if (problem === undefined) return url;
    ctx.addIssue({ code: 'custom', message: `DATABASE_URL ${problem} (got "${redactPassword(url)}")` });
    return z.NEVER;
  });

const storeSchema = z.object({
  DATABASE_URL: databaseUrl,
  DATABASE_POOL_SIZE: int('DATABASE_POOL_SIZE', 1, 1000, 10),
});

const serveSchema = storeSchema.extend({
  PORT: int('PORT', 0, 65535, 3000),
  HOST: z
    .string()
    .optional()
    .transform((v) => v || '0.0.0.0'),
  LOG_LEVEL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const level = v || 'info';
      if ((LOG_LEVELS as readonly string[]).includes(level)) return level as (typeof LOG_LEVELS)[number];
      ctx.addIssue({ code: 'custom', message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${v}")` });
      return z.NEVER;
    }),
  PLANT_STORE_TOKEN: z
    .string()
    .optional()
    .refine((v) => v === undefined || (v.length >= 20 && isWellFormedToken(v)), {
      message: 'PLANT_STORE_TOKEN must be 20 to 512 characters of A-Z a-z 0-9 - . _ ~ + / (optionally ending in =)',
    }),
  BODY_LIMIT_BYTES: int('BODY_LIMIT_BYTES', 2, 1024 * 1024 * 64, 16 * 1024),
  HEADERS_TIMEOUT_MS: int('HEADERS_TIMEOUT_MS', 1, 3_600_000, 10_000),
  REQUEST_TIMEOUT_MS: int('REQUEST_TIMEOUT_MS', 1, 3_600_000, 30_000),
  KEEP_ALIVE_TIMEOUT_MS: int('KEEP_ALIVE_TIMEOUT_MS', 1, 3_600_000, 5_000),
  SHUTDOWN_TIMEOUT_MS: int('SHUTDOWN_TIMEOUT_MS', 1, 3_600_000, 10_000),
});

export interface StoreConfig {
  databaseUrl: string;
  /** Most connections one process holds to PostgreSQL (unused by SQLite). */
  poolSize: number;
}

export interface Config extends StoreConfig {
  port: number;
  host: string;
  logLevel: (typeof LOG_LEVELS)[number];
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

function parse<S extends z.ZodType>(schema: S, input: Record<string, string | undefined>): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ConfigError(result.error.issues[0]?.message ?? 'invalid configuration');
  return result.data;
}

export function loadStoreConfig(env: NodeJS.ProcessEnv): StoreConfig {
  const c = parse(storeSchema, env);
  return { databaseUrl: c.DATABASE_URL, poolSize: c.DATABASE_POOL_SIZE };
}

/** Reads the environment once; flags (`serve --port 8080`) win over the environment. */
export function loadConfig(env: NodeJS.ProcessEnv, flags: { port?: string; host?: string } = {}): Config {
  const input = {
    ...env,
    ...(flags.port !== undefined && { PORT: flags.port }),
    ...(flags.host !== undefined && { HOST: flags.host }),
  };
  const c = parse(serveSchema, input);
  return {
    databaseUrl: c.DATABASE_URL,
    poolSize: c.DATABASE_POOL_SIZE,
    port: c.PORT,
    host: c.HOST,
    logLevel: c.LOG_LEVEL,
    bootstrapToken: c.PLANT_STORE_TOKEN,
    bodyLimit: c.BODY_LIMIT_BYTES,
    headersTimeoutMs: c.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: c.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: c.KEEP_ALIVE_TIMEOUT_MS,
    shutdownTimeoutMs: c.SHUTDOWN_TIMEOUT_MS,
  };
}
