import { pino, type DestinationStream, type Logger } from 'pino';
import { stdoutOutput } from './log-output.js';

const REDACTED = '[redacted]';
/** Query parameters whose value is a credential, whatever it looks like (compared decoded, lower case). */
const SECRET_NAMES = new Set([
  'access_token',
  'token',
  'api_key',
  'apikey',
  'id_token',
  'refresh_token',
  'jwt',
  'auth',
  'authorization',
  'password',
  'passwd',
  'secret',
  'client_secret',
  'session',
  'ticket',
]);
/**
 * What a credential looks like wherever it is, compared on the decoded text: a managed token
 * (`pst_`, in any case), a JWT (JOSE compact form: a JSON header, base64url, `eyJ`, then a dot),
 * or anything sent as a bearer credential (`Bearer <value>`, as in an Authorization header).
 */
const TOKEN_MARK = /pstt?_|eyJ[\w-]*\.[\w-]*\.|\bbearer\s/i;

/** Whether `text` holds what looks like a credential (see TOKEN_MARK): it must not reach a log. */
export const looksLikeCredential = (text: string): boolean => TOKEN_MARK.test(text);
/** Nothing in a URL without these can hide a token: the common case costs one test. */
const MAYBE_SECRET = /[%+]|pstt?_|token|ticket|api_?key|eyJ|bearer|jwt|auth|pass|secret|session/i;
const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * Percent-decodes `text` as far as it goes, never throwing: valid `%XX` escapes become bytes,
 * anything else (`%`, `%zz`, a truncated escape) stays as it is, and bytes that are not UTF-8
 * become U+FFFD. Repeated while it changes something (at most 4 times), so double encoding
 * (`%2570st_`) decodes too. With `plus`, `+` is a space first, as in a query string.
 */
export function lenientDecode(text: string, plus = false): string {
  let current = plus ? text.replace(/\+/g, ' ') : text;
  for (let round = 0; round < 4 && current.includes('%'); round++) {
    const bytes: number[] = [];
    for (let i = 0; i < current.length; i++) {
      const escape = current.slice(i + 1, i + 3);
      if (current[i] === '%' && HEX.test(escape)) {
        bytes.push(parseInt(escape, 16));
        i += 2;
      } else {
        const code = current.codePointAt(i)!;
        if (code > 0xffff) i++;
        bytes.push(...Buffer.from(String.fromCodePoint(code), 'utf8'));
      }
    }
    const next = Buffer.from(bytes).toString('utf8');
    if (next === current) break;
    current = next;
  }
  return current;
}

function redactQueryPart(part: string): string {
  const eq = part.indexOf('=');
  const rawName = eq === -1 ? part : part.slice(0, eq);
  const name = lenientDecode(rawName, true);
  if (TOKEN_MARK.test(name)) return REDACTED;
  if (eq === -1) return part;
  const value = lenientDecode(part.slice(eq + 1), true);
  if (SECRET_NAMES.has(name.trim().toLowerCase()) || TOKEN_MARK.test(value)) return `${rawName}=${REDACTED}`;
  return part;
}

/**
 * Tokens can be pasted into a URL by mistake; they must never reach the log. Judged on the
 * decoded form, so no spelling walks past: a path segment whose decoded text holds `pst_` is
 * redacted whole, and so is a query value that holds it or whose name is a credential's
 * (`access_token`, `token`, `api_key`, ...), however they are percent-encoded, `+` included.
 */
export function redactUrl(url: string): string {
  if (!MAYBE_SECRET.test(url)) return url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const redactedPath = path
    .split('/')
    .map((segment) => (TOKEN_MARK.test(lenientDecode(segment)) ? REDACTED : segment))
    .join('/');
  if (q === -1) return redactedPath;
  const query = url
    .slice(q + 1)
    .split(/([&;])/)
    .map((piece) => (piece === '&' || piece === ';' ? piece : redactQueryPart(piece)))
    .join('');
  return `${redactedPath}?${query}`;
}

type Coded = { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };

/** The code of an error, or of what caused it (the first of an AggregateError's, a cause's). */
function codeOf(err: Coded | undefined, depth = 0): unknown {
  if (err === null || typeof err !== 'object' || depth > 4) return undefined;
  if (err.code !== undefined) return err.code;
  const first = Array.isArray(err.errors) ? (err.errors[0] as Coded | undefined) : undefined;
  return codeOf(first, depth + 1) ?? codeOf(err.cause as Coded | undefined, depth + 1);
}

/**
 * A logged `err`, whatever was thrown, with its message and its code: pino's own serialisation
 * (type, message with its causes', stack, own properties), its code taken from a cause or from
 * the first of an AggregateError's when it has none itself, and a message where it had none (a
 * connection refused on every address of `localhost` is an AggregateError with an empty message).
 */
export function serializeError(err: unknown): Record<string, unknown> {
  if (err === null || typeof err !== 'object') return { type: typeof err, message: String(err) };
  const out: Record<string, unknown> = { ...pino.stdSerializers.err(err as Error) };
  const code = codeOf(err as Coded);
  if (code !== undefined) out.code = code;
  const first = Array.isArray((err as Coded).errors) ? ((err as Coded).errors as Coded[])[0] : undefined;
  if (!out.message) out.message = String(first?.message || code || out.type || 'unknown error');
  return out;
}

/** The one logger of a process: JSON lines on stdout (or `destination`), Authorization headers never written. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      serializers: { err: serializeError },
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
    },
    // Lines written while a write is under way go out together, instead of one blocking write
    // per request on the event loop; what is left goes out when the process exits.
    destination ?? stdoutOutput(),
  );
}
