// What CORS_ORIGINS costs (PRODUCT.md §4, "Browsers"; issue 49): the service with an allowed origin
// set, every request of its loads sent with that Origin (so every answer carries the CORS
// headers), against the same service without the setting or the header: POST and GET by id on
// SQLite, A/B interleaved (ab.ts). A stream's fan-out meets CORS only where the stream opens:
// once it is open its events are written alike either way.
import { twoWays } from './ab.js';
import type { WriteBench } from './writes.js';

/** An origin of a page on another port of this machine, as the browser tests use. */
const ORIGIN = 'http://127.0.0.1:8080';

export async function corsCost(b: WriteBench): Promise<void> {
  console.log(
    `\n## CORS_ORIGINS set and not, SQLite, ${b.connections} connections, ${b.rounds} rounds of ${b.seconds} s, A/B interleaved\n`,
  );
  await twoWays(
    b,
    'cors',
    [
      { name: 'no CORS' },
      { name: 'CORS_ORIGINS, Origin sent', env: { CORS_ORIGINS: ORIGIN }, headers: { origin: ORIGIN } },
    ],
    ['POST', 'GET'],
  );
}
