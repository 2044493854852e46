// The hosts of a postgres:// URL (parsed where the settings validate it: config/database-url.ts).
export { parseHosts, type PostgresHost } from '../../config/database-url.js';
