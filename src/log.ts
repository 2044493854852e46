import type { FastifyServerOptions } from 'fastify';
import { pino } from 'pino';

/** Tokens can be pasted into a URL by mistake; they must never reach the log. */
export function redactUrl(url: string): string {
  return url
    .replace(/pst_[A-Za-z0-9_-]*/g, 'pst_[redacted]')
    .replace(/([?&](?:access_token|token|api_key)=)[^&#]*/gi, '$1[redacted]');
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
    // Lines written while a write is under way go out together, instead of one blocking write
    // per request on the event loop. pino flushes what is left when the process exits.
    stream: pino.destination({ dest: 1, sync: false }),
  };
}
