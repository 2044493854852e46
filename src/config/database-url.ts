// DATABASE_URL: which store, and for PostgreSQL which hosts. A libpq URL may name several hosts
// (`postgres://user@db1:5432,db2:5432/plants`); the store writes to the one that is the primary.
import { ConfigError, postgresParametersProblem, redactPassword, type Parse } from './parse.js';

/** One host of a postgres:// URL's list. */
export interface PostgresHost {
  /** As the URL names it (`db1:5432`, `[::1]:5433`, `db1`): what /readyz and the metrics show. */
  name: string;
  /** The URL with this host alone in its place, everything else (user, database, parameters) as given. */
  url: string;
}

/** Scheme, user information (up to the last @ of the authority), host list, and the rest. */
const AUTHORITY = /^(postgres(?:ql)?:\/\/)(?:([^/?#]*)@)?([^/?#]*)(.*)$/s;
/** A host of a list: a name or IPv4 address, or an IPv6 address in brackets; then an optional port. */
const HOST_ENTRY = /^(\[[0-9A-Fa-f:.]+\]|[^[\]:@]+)(?::([0-9]{1,5}))?$/;

/** The hosts `url` names, or why it names none we can use. */
function hostsOf(url: string): PostgresHost[] | string {
  const parts = AUTHORITY.exec(url);
  if (parts === null) return 'must be sqlite:<path> or postgres://user@host:port/database';
  const [, scheme, user, list = '', rest] = parts;
  const prefix = `${scheme}${user === undefined ? '' : `${user}@`}`;
  // One host (or none: libpq's default): the URL as given, exactly as before lists were read.
  const entries = list.includes(',') ? list.split(',') : undefined;
  if (entries === undefined) return URL.canParse(url) ? [{ name: list, url }] : 'is not a valid postgres:// URL';
  const hosts: PostgresHost[] = [];
  for (const entry of entries) {
    const m = HOST_ENTRY.exec(entry);
    const port = m?.[2] === undefined ? undefined : Number(m[2]);
    if (m === null || (port !== undefined && !(port >= 1 && port <= 65535))) {
      return `names "${entry}" in its host list "${list}": name each host as host or host:port (a port from 1 to 65535), separated by commas`;
    }
    if (hosts.some((h) => h.name === entry)) return `names ${entry} twice in its host list "${list}"`;
    const hostUrl = `${prefix}${entry}${rest}`;
    if (!URL.canParse(hostUrl)) return `is not a valid postgres:// URL with the host ${entry} of its list`;
    hosts.push({ name: entry, url: hostUrl });
  }
  return hosts;
}

/**
 * The hosts a postgres:// URL names, in its order (libpq's multi-host form: `h1:5432,h2:5433`);
 * a URL of one host is that host with the URL as given. Throws a ConfigError naming `setting`
 * when the list is not one.
 */
export function parseHosts(url: string, setting = 'DATABASE_URL'): PostgresHost[] {
  const hosts = hostsOf(url);
  if (typeof hosts === 'string') throw new ConfigError(`${setting} ${hosts} (got "${redactPassword(url)}")`);
  return hosts;
}

function databaseUrlProblem(url: string): string | undefined {
  if (url === 'sqlite::memory:') return 'sqlite::memory: is not durable; give a file path';
  if (/^sqlite:.+/.test(url)) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) return 'must be sqlite:<path> or postgres://user@host:port/database';
  const hosts = hostsOf(url);
  if (typeof hosts === 'string') return hosts;
  return postgresParametersProblem(hosts[0]!.url);
}

export const databaseUrl: Parse<string> = (url, name) => {
  const problem = databaseUrlProblem(url);
  if (problem === undefined) return url;
  throw new ConfigError(`${name} ${problem} (got "${redactPassword(url)}")`);
};
