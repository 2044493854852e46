// DATABASE_READ_URL: the standbys that serve reads, one host or several as in DATABASE_URL
// (`postgres://user@db2:5432,db3:5432/plants`), read by the same host-list parser.
import { parseHosts } from './database-url.js';
import { ConfigError, postgresParametersProblem, redactPassword, type Parse } from './parse.js';

export const databaseReadUrl: Parse<string> = (url, name) => {
  const problem = !/^postgres(ql)?:\/\//.test(url)
    ? 'must be postgres://user@host1:port1,host2:port2/database (one host or several)'
    : postgresParametersProblem(parseHosts(url, name)[0]!.url);
  if (problem === undefined) return url;
  throw new ConfigError(`${name} ${problem} (got "${redactPassword(url)}")`);
};
