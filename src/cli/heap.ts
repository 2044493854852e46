import { setFlagsFromString } from 'node:v8';

/**
 * Keeps the server's heap near what it holds, once it is listening: each limit of the old
 * generation 30% above what the last full collection kept, instead of a factor of V8's choosing
 * (up to 4), which let the server's memory under load grow far past the target and stay there
 * (docs/performance.md#memory has the figures).
 *
 * Given on the command line (`--heap-growing-percent=30`), the flag made start-up slower:
 * Node's code caches are keyed by V8's flags, so it compiled its own modules and the
 * dependencies' again. Set here, after the start, it costs nothing there; V8 reads it each time it
 * sets a limit.
 */
export function keepHeapSmall(): { heapGrowingPercent: number } {
  const heapGrowingPercent = 30;
  setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
  return { heapGrowingPercent };
}
