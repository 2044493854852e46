import { ConfigError } from './parse.js';
import { RENAMED, SETTINGS } from './settings.js';

export { ConfigError } from './parse.js';

export type SettingKey = keyof typeof SETTINGS;

/** The validated settings, one property per row of the table, typed by its parser and default. */
export type Config = { [K in SettingKey]: (typeof SETTINGS)[K]['default'] };

export type Env = Record<string, string | undefined>;

/** `serve` flags by setting key (commander's option values); a flag wins over its variable. */
export type Flags = Partial<Record<SettingKey, string>>;

/** The settings of JWT mode, present when a JWKS URL or file is set. */
export interface JwtConfig {
  /** Exactly one of the two: keys fetched (and refreshed) from a URL, or read once from a file. */
  jwksUrl: string | undefined;
  jwksFile: string | undefined;
  issuer: string;
  audience: string;
  /** Least time between two fetches of the JWKS: bounds refreshes forced by unknown `kid`s. */
  jwksCooldownMs: number;
}

function read<K extends SettingKey>(env: Env, flags: Flags, key: K): Config[K] {
  const s = SETTINGS[key];
  // Empty counts as unset: shells make it easy to export an empty variable.
  const text = flags[key] ?? env[s.env];
  if (text === undefined || text === '') return s.default as Config[K];
  return s.parse(text, s.env) as Config[K];
}

/**
 * Reads and checks some settings: the commands that only open the store need not fail on a
 * setting that only the server uses.
 */
export function loadSettings<K extends SettingKey>(env: Env, keys: readonly K[], flags: Flags = {}): Pick<Config, K> {
  for (const [old, now] of Object.entries(RENAMED)) {
    if (env[old] !== undefined && env[old] !== '') {
      throw new ConfigError(`${old} was renamed ${now} (it counts per RATE_LIMIT_WINDOW_SECONDS, not per minute)`);
    }
  }
  const out = {} as Pick<Config, K>;
  for (const key of keys) out[key] = read(env, flags, key);
  return out;
}

/** Reads the environment once, every setting; flags (`serve --port 8080`) win over the environment. */
export function loadConfig(env: Env, flags: Flags = {}): Config {
  const config = loadSettings(env, Object.keys(SETTINGS) as SettingKey[], flags);
  if (config.metricsPort !== undefined && config.metricsPort !== 0 && config.metricsPort === config.port) {
    throw new ConfigError(`METRICS_PORT must differ from PORT (both ${config.port}): it is a second listener`);
  }
  jwtConfig(config);
  checkReadUrl(config);
  return config;
}

/**
 * Standbys serve a PostgreSQL store's reads: they need one, and hold the same schema (a
 * DATABASE_READ_URL without `schema=` reads DATABASE_URL's).
 */
function checkReadUrl({ databaseUrl, databaseReadUrl }: Pick<Config, 'databaseUrl' | 'databaseReadUrl'>): void {
  if (databaseReadUrl === undefined) return;
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_READ_URL needs a postgres:// DATABASE_URL: standbys serve a PostgreSQL store');
  }
  const schemaOf = (url: string) => /[?&]schema=([^&#]*)/.exec(url)?.[1];
  const read = schemaOf(databaseReadUrl);
  if (read !== undefined && read !== schemaOf(databaseUrl)) {
    throw new ConfigError(
      `DATABASE_READ_URL schema=${read} differs from DATABASE_URL's: standbys hold the primary's schema (leave schema= out to read the same)`,
    );
  }
}

/** JWT mode's settings, checked together; undefined when JWT mode is off. */
export function jwtConfig(
  c: Pick<Config, 'jwtJwksUrl' | 'jwtJwksFile' | 'jwtIssuer' | 'jwtAudience' | 'jwtJwksCooldownMs'>,
): JwtConfig | undefined {
  const { jwtJwksUrl: url, jwtJwksFile: file, jwtIssuer: issuer, jwtAudience: audience } = c;
  if (!url && !file) {
    if (issuer || audience) throw new ConfigError('JWT_ISSUER and JWT_AUDIENCE need JWT_JWKS_URL or JWT_JWKS_FILE');
    return undefined;
  }
  if (url && file) throw new ConfigError('JWT_JWKS_URL and JWT_JWKS_FILE exclude each other; set one');
  if (!issuer) throw new ConfigError('JWT_ISSUER is required in JWT mode (the "iss" tokens must carry)');
  if (!audience) throw new ConfigError('JWT_AUDIENCE is required in JWT mode (the "aud" tokens must carry)');
  return { jwksUrl: url, jwksFile: file, issuer, audience, jwksCooldownMs: c.jwtJwksCooldownMs };
}

/** What the store needs: the commands that only open the store read just these. */
export const STORE_SETTINGS = [
  'databaseUrl',
  'databasePoolSize',
  'sqliteCheckpointPages',
] as const satisfies readonly SettingKey[];
export type StoreConfig = Pick<Config, (typeof STORE_SETTINGS)[number]>;

/** What webhook delivery and `webhook add` read. */
export const WEBHOOK_SETTINGS = [
  'webhookAllowPrivate',
  'webhookRetryWindowMs',
  'webhookTimeoutMs',
  'webhookBackoffBaseMs',
  'webhookBackoffMaxMs',
  'webhookPollIntervalMs',
  'webhookConcurrency',
  'webhookSecretKey',
] as const satisfies readonly SettingKey[];
export type WebhookConfig = Pick<Config, (typeof WEBHOOK_SETTINGS)[number]>;
