// An answer as the service answers a stream of the changes (the same headers and preamble), and
// nothing else: the reference for what node:http itself keeps for an open stream, in the feed
// section (bare-sse-server.mjs) and in test/http/idle-stream-memory.test.ts.
import { randomUUID } from 'node:crypto';

/** Answers `res` as an idle stream and keeps it in `held` until it closes. */
export function holdAsStream(res, held) {
  res.writeHead(200, {
    'x-request-id': randomUUID(),
    'ratelimit-limit': '1000000000',
    'ratelimit-remaining': '999999999',
    'ratelimit-reset': '60',
    vary: 'Accept',
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  res.write(': following the changes\nretry: 1000\n\n');
  held.add(res);
  res.on('close', () => held.delete(res));
}
