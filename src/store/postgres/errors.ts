import { StoreUnavailableError } from '../../domain/errors.js';

/**
 * SQLSTATE classes that say "the database cannot serve this now" rather than "this request is
 * wrong": connection exceptions, refused credentials, transaction rollbacks (serialization,
 * deadlock), insufficient resources, operator intervention (shutdown, statement timeout) and
 * system errors. A retry later may succeed, so the HTTP layer answers 503 with Retry-After.
 */
const TRANSIENT_CLASSES = new Set(['08', '28', '40', '53', '57', '58']);

/**
 * Socket-level failures reaching the server, and this process running out of what a connection
 * needs: descriptors (a flood of clients holding every one), socket buffers, ephemeral ports.
 * Each passes when the flood does.
 */
const NETWORK_CODES = new Set([
  'EMFILE',
  'ENFILE',
  'ENOBUFS',
  'ENOMEM',
  'EADDRNOTAVAIL',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * pg-pool's answer to a request that waited its whole connection time-out for one of the pool's
 * connections, every one of them in use: this process's own work holds them (writes waiting for
 * rows other writes hold, mostly), not a host that is away. A new connection that cannot be made
 * fails otherwise ("Connection terminated due to connection timeout", a network error).
 */
const POOL_FULL = /^timeout exceeded when trying to connect$/;

/** pg and pg-pool raise these as plain Errors, without a code. */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  POOL_FULL,
  /^timeout expired$/,
  /^Query read timeout$/,
  /is not queryable$/,
];

/**
 * Refusals that come from other work on the same rows rather than from a database that is away:
 * a serialization failure, a deadlock (after its one retry), a lock not granted, a statement
 * (a lock wait, mostly) cancelled at its time-out. Told apart so that a client, and an operator
 * reading the log, sees contention rather than an outage.
 */
const BUSY_CODES = new Set(['40001', '40P01', '55P03', '57014']);

const codeOf = (err: unknown): unknown => (err instanceof Error ? (err as { code?: unknown }).code : undefined);

/**
 * "cannot execute … in a read-only transaction": the host is a standby, or a primary that became
 * one. A failover is under way, or was; another host may take the write.
 */
const READ_ONLY = '25006';

/** The server is shutting down, crashing, or starting up (a standby being promoted, a restart). */
const GOING_AWAY = new Set(['57P01', '57P02', '57P03']);

export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code === READ_ONLY) return true;
    if (NETWORK_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return TRANSIENT_CLASSES.has(code.slice(0, 2)) || BUSY_CODES.has(code);
  }
  if (DRIVER_MESSAGES.some((m) => m.test(err.message))) return true;
  // A failed connection attempt may report several addresses' errors together.
  if (err instanceof AggregateError) return err.errors.some(isUnavailable);
  return err.cause !== undefined && isUnavailable(err.cause);
}

/**
 * An outage of the host itself rather than of the database's capacity: it cannot be reached, went
 * away, or takes no writes. With several hosts, another may be the primary now (primary.ts); a busy
 * database (a time-out, a deadlock, too many clients) is still the primary.
 */
export function isHostFailure(err: unknown): boolean {
  const e = err instanceof StoreUnavailableError ? err.cause : err;
  if (!isUnavailable(e)) return false;
  const code = (e as { code?: unknown }).code;
  if (e instanceof Error && POOL_FULL.test(e.message)) return false;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code === READ_ONLY || code.startsWith('08') || GOING_AWAY.has(code);
}

/** What a store method rejects with: StoreUnavailableError for outages, the error itself for bugs. */
export function storeError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  if (!isUnavailable(err)) return err;
  if (POOL_FULL.test((err as Error).message)) {
    return new StoreUnavailableError(err, 'every connection to the store is busy; retry later');
  }
  const busy = BUSY_CODES.has(codeOf(err) as string);
  return new StoreUnavailableError(err, busy ? 'the store is busy with other writes; retry later' : undefined);
}
