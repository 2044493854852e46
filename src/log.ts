import { pino, type DestinationStream, type Logger } from 'pino';

/** Tokens can be pasted into a URL by mistake; they must never reach the log. */
export function redactUrl(url: string): string {
  return url
    .replace(/pst_[A-Za-z0-9_-]*/g, 'pst_[redacted]')
    .replace(/([?&](?:access_token|token|api_key)=)[^&#]*/gi, '$1[redacted]');
}

/** The one logger of a process: JSON lines on stdout (or `destination`), Authorization headers never written. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
    },
    // Lines written while a write is under way go out together, instead of one blocking write
    // per request on the event loop. pino flushes what is left when the process exits.
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
