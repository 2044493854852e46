// A PostgreSQL URL that names several hosts, as libpq's connection strings do:
// `postgres://user@db1:5432,db2:5433/plants?schema=x`. The WHATWG URL parser refuses a comma in
// the host, and pg's reads only one host, so the list is split here into one URL per host, each
// with the rest of the URL (credentials, database, parameters) as it was.

/** scheme, user information (with its @), the host list, and the rest (path, query). */
const PARTS = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/s;

/**
 * One URL per host of a libpq-style host list, in the list's order; undefined when the text is not
 * a postgres:// URL or one of its URLs does not parse. A host without a port gets the URL's
 * default (5432), as libpq gives it.
 */
export function hostUrls(url: string): string[] | undefined {
  const m = PARTS.exec(url);
  if (!m) return undefined;
  const [, scheme, user = '', list, rest] = m as unknown as [string, string, string | undefined, string, string];
  const hosts = list.split(',');
  if (hosts.some((h) => h === '')) return undefined;
  const urls = hosts.map((host) => `${scheme}${user}${host}${rest}`);
  return urls.every((u) => URL.canParse(u)) ? urls : undefined;
}

/** `host:port` of a one-host URL, for logs and metric labels (never its credentials). */
export function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}`;
}
