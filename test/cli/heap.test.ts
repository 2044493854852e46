// The server's heap after keepHeapSmall (called by `plant-store serve` once it listens): the
// same allocations, in two fresh processes with npm start's young generation
// (--max-semi-space-size=16), one with it and one without. Each keeps its last 20 rounds of
// objects (about 20 MB), long enough for them to reach the old generation, and drops the older
// ones, as a server under load does with its requests. Not timed: V8 sizes the old generation by
// what it allocates and keeps.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { pollUntil } from '../support/poll.js';
import { startServer, type ServerProcess } from '../support/server.js';

const heap = new URL('../../src/cli/heap.ts', import.meta.url).href;

function peakOldSpaceMb(tuned: boolean): number {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { keepHeapSmall } from ${JSON.stringify(heap)};
    if (${tuned}) keepHeapSmall();
    const kept = [];
    let peak = 0;
    for (let round = 0; round < 300; round++) {
      kept.push(Array.from({ length: 10_000 }, (_, k) => ({ k, name: 'plant ' + round + ' ' + k })));
      if (kept.length > 20) kept.shift();
      peak = Math.max(peak, getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size);
    }
    console.log(peak / 2 ** 20);
  `;
  const out = execFileSync(
    process.execPath,
    ['--max-semi-space-size=16', '--import', 'tsx/esm', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  return Number(out.trim());
}

describe('keepHeapSmall', () => {
  it('holds the heap near what the program keeps, where V8 alone lets it grow', () => {
    const alone = peakOldSpaceMb(false);
    const tuned = peakOldSpaceMb(true);
    assert.ok(tuned < 0.75 * alone, `old space at most ${tuned.toFixed(0)} MB with it, ${alone.toFixed(0)} MB without`);
  });
});

describe('plant-store serve', () => {
  let server: ServerProcess | undefined;
  after(() => server?.kill());

  it('sets the heap limits once it listens', async () => {
    server = await startServer({ env: { LOG_LEVEL: 'debug' } });
    const set = () => server!.stdout.find((l) => l.includes('old-generation heap limits set'));
    assert.ok(await pollUntil(async () => set() !== undefined, 5000), 'no log line says the limits were set');
    assert.equal((JSON.parse(set()!) as { heapGrowingPercent?: number }).heapGrowingPercent, 30);
  });
});
