// The parsers of the settings table: each takes the text of one setting and returns its typed
// value, or throws the one line that names the setting and says what it must be.
import { isWellFormedToken, parseDuration } from '../domain/token.js';

/** A configuration value that stops the process; its message is the one line the operator sees. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Parse<T> = (text: string, name: string) => T;

export function integer(min: number, max: number): Parse<number> {
  return (v, name) => {
    const n = /^[0-9]+$/.test(v) ? Number(v) : NaN;
    if (!(n >= min && n <= max)) throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${v}")`);
    return n;
  };
}

export const boolean: Parse<boolean> = (v, name) => {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(`${name} must be true or false (got "${v}")`);
};

/** A boolean of OpenTelemetry's variables, read as its SDK reads them: `true` or `false` in any case. */
export const caselessBoolean: Parse<boolean> = (v, name) => {
  const lower = v.trim().toLowerCase();
  if (lower === 'true' || lower === 'false') return lower === 'true';
  throw new ConfigError(`${name} must be true or false (got "${v}")`);
};

/** An http:// or https:// URL, as an OTLP endpoint is. */
export const httpUrl: Parse<string> = (v, name) => {
  if (URL.canParse(v) && /^https?:$/.test(new URL(v).protocol)) return v;
  throw new ConfigError(`${name} must be an http:// or https:// URL (got "${v.replace(/\/\/[^@/]*@/, '//***@')}")`);
};

/** A whole number of seconds, minutes, hours, days or weeks; `examples` say what suits the setting. */
export const durationLike =
  (examples: string): Parse<number> =>
  (v, name) => {
    const ms = parseDuration(v);
    if (ms === undefined) throw new ConfigError(`${name} must look like ${examples} (got "${v}")`);
    return ms;
  };

export const duration = durationLike('24h, 90m, 3600s, 7d or 2w');

export function oneOf<const T extends string>(values: readonly T[]): Parse<T> {
  return (v, name) => {
    if ((values as readonly string[]).includes(v)) return v as T;
    throw new ConfigError(`${name} must be one of ${values.join(', ')} (got "${v}")`);
  };
}

export const text: Parse<string> = (v) => v;

/** A PostgreSQL schema name for `?schema=`: a plain lower-case identifier, nothing to escape anywhere. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Whether PostgreSQL keeps the schema `name` for itself: its catalogue (`pg_catalog`,
 * `information_schema`) and every `pg_` name (`pg_toast`, `pg_temp_3`; `CREATE SCHEMA` refuses
 * them). The store's tables never go there.
 */
export function isSystemSchema(name: string): boolean {
  return name === 'information_schema' || name.startsWith('pg_');
}

/** Why `name` cannot be the schema of `?schema=`, or undefined. */
export function schemaNameProblem(name: string): string | undefined {
  if (!SCHEMA_NAME.test(name)) {
    return 'schema= must be a lower-case identifier (a-z, 0-9, _, not starting with a digit; at most 63 characters)';
  }
  if (isSystemSchema(name)) {
    return `schema= must name a schema of your own: "${name}" is PostgreSQL's (information_schema and pg_ names)`;
  }
  return undefined;
}

/**
 * The URL as it may appear in an error line: never with its password, even one holding / or @,
 * nor one given as a parameter (`?password=`, `?sslpassword=`).
 */
/** The sslmode values libpq takes, and pg's no-verify. */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/**
 * What is wrong with a postgres:// URL's parameters that the store reads: `?schema=`, and an
 * `sslmode` pg would not refuse but take as some TLS (`sslmode=bogus` connected with TLS, and a
 * server without it answered "does not support SSL connections").
 */
export function postgresParametersProblem(url: string): string | undefined {
  const params = new URL(url).searchParams;
  const mode = params.get('sslmode');
  if (mode !== null && !SSL_MODES.includes(mode)) return `sslmode must be one of ${SSL_MODES.join(', ')}`;
  const schema = params.get('schema');
  return schema === null ? undefined : schemaNameProblem(schema);
}

/**
 * The URL without its password: the user name stays (it says which role connected), what follows
 * its first `:` up to the last `@` goes, as does a `password=` parameter.
 */
export const redactPassword = (url: string) =>
  url
    .replace(
      /\/\/(.*)@/,
      (_, info: string) => `//${info.includes(':') ? `${info.slice(0, info.indexOf(':'))}:***` : info}@`,
    )
    .replace(/([?&](?:ssl)?password=)[^&]*/gi, '$1***');

export const bootstrapToken: Parse<string> = (v, name) => {
  if (v.length >= 20 && isWellFormedToken(v)) return v;
  throw new ConfigError(`${name} must be 20 to 512 characters of A-Z a-z 0-9 - . _ ~ + / (optionally ending in =)`);
};

/** http(s) only; plain http only to this machine, where nobody can swap the keys on the way. */
export const jwksUrl: Parse<string> = (v, name) => {
  let url: URL | undefined;
  try {
    url = new URL(v);
  } catch {
    url = undefined;
  }
  const local = url && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url && (url.protocol === 'https:' || (url.protocol === 'http:' && local))) return url.href;
  throw new ConfigError(`${name} must be an https:// URL (http:// only for localhost) (got "${v}")`);
};

/**
 * Origins whose pages may call the API, comma-separated, each exactly as a browser sends it in
 * `Origin` (`scheme://host[:port]`: lower case, no path, no default port). `*` (alone or in a
 * host) and `null` are refused: a bearer API names its callers, and `null` is what sandboxed
 * frames and files send.
 */
export const origins: Parse<readonly string[]> = (v, name) => {
  const list = v
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const o of list) {
    // A wildcard in a host (`http://*.example.com`) parses as a URL, but no browser sends it: it
    // would match nothing while its operator thought it matched a whole domain.
    if (o.includes('*'))
      throw new ConfigError(
        `${name} must name each origin; "*" is refused, alone or in a host (a bearer API names its callers; got "${o}")`,
      );
    if (o === 'null')
      throw new ConfigError(`${name} must not list "null": sandboxed frames and files send it, so it names no one`);
    const exact = URL.canParse(o) && /^https?:$/.test(new URL(o).protocol) ? new URL(o).origin : undefined;
    if (exact !== o) {
      throw new ConfigError(
        `${name} must list origins as browsers send them, scheme://host[:port] with no path or trailing slash (got "${o}"${exact && exact !== 'null' ? `; did you mean "${exact}"?` : ''})`,
      );
    }
  }
  return list;
};

export const redisUrl: Parse<string> = (v, name) => {
  if (/^rediss?:\/\/[^\s]+$/.test(v)) return v;
  throw new ConfigError(
    `${name} must be redis://[user:password@]host[:port][/db] or rediss://… (got "${v.replace(/\/\/[^@/]*@/, '//***@')}")`,
  );
};

export const secretKey: Parse<Buffer> = (v, name) => {
  const key = /^[A-Za-z0-9+/]+=*$/.test(v) ? Buffer.from(v, 'base64') : Buffer.alloc(0);
  if (key.length === 32) return key;
  throw new ConfigError(`${name} must be 32 bytes in base64 (openssl rand -base64 32)`);
};
