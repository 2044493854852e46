// What CORS_ORIGINS costs (PRODUCT.md §4, "Browsers"; issue 49): the service with an allowed origin
// set, every request of its loads sent with that Origin (so every answer carries the CORS
// headers), against the same service without the setting or the header: POST and GET by id on
// SQLite, A/B interleaved (ab.ts); then the change feed's fan-out to streams opened with that
// Origin and without (cors-fanout.ts): CORS meets a stream only where it opens, which this checks.
import { twoWays, type Way } from './ab.js';
import { corsFanOut } from './cors-fanout.js';
import type { WriteBench } from './writes.js';

/** An origin of a page on another port of this machine, as the browser tests use. */
const ORIGIN = 'http://127.0.0.1:8080';
const WAYS: [Way, Way] = [
  { name: 'no CORS' },
  { name: 'CORS_ORIGINS, Origin sent', env: { CORS_ORIGINS: ORIGIN }, headers: { origin: ORIGIN } },
];

export async function corsCost(b: WriteBench): Promise<void> {
  console.log(
    `\n## CORS_ORIGINS set and not, SQLite, ${b.connections} connections, ${b.rounds} rounds of ${b.seconds} s, A/B interleaved\n`,
  );
  await twoWays(b, 'cors', WAYS, ['POST', 'GET']);
  await corsFanOut(b, WAYS);
}
