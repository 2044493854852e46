import type { SendResult } from './send.js';

/** Error codes of a failed attempt, as an operator reads them in `webhook list`. */
const BY_CODE: Readonly<Record<string, string>> = {
  ETIMEDOUT: 'timeout',
  EPRIVATEADDRESS: 'refused: private address',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ENOTFOUND: 'name not found',
  EAI_AGAIN: 'name not found',
  EAI_NONAME: 'name not found',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ABORT_ERR: 'interrupted: the server stopped',
};

/** TLS failures: Node's `ERR_TLS_…`/`ERR_SSL_…` and OpenSSL's certificate codes. */
const TLS = /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_|HOSTNAME_MISMATCH)/;

/**
 * A failed attempt's reason in a few words, as its endpoint keeps it for `webhook list`: `HTTP 500`,
 * `timeout`, `refused: private address`, `connection refused`, `TLS: CERT_HAS_EXPIRED`. The
 * whole error stays with the delivery (`webhook list`'s recent attempts) and in the log line. A
 * failure with no code (a secret the key cannot open, a window that ended) is its error itself.
 */
export function failureReason(r: SendResult): string {
  if (r.status !== null) return `HTTP ${r.status}`;
  const error = r.error ?? 'no answer';
  const code = /^([A-Z][A-Z0-9_]*): /.exec(error)?.[1];
  if (code === undefined) return error;
  return BY_CODE[code] ?? (TLS.test(code) ? `TLS: ${code}` : code);
}
