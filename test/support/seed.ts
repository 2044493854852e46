// Randomised tests take a seed: TEST_SEED=<n> replays a run, otherwise one is drawn and printed,
// and a failure's message names it. The draws come from mulberry32, not Math.random, so that
// the same seed makes the same choices.
import { randomInt } from 'node:crypto';

/** mulberry32: small, fast and good enough to pick test inputs. Numbers in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed of this run: TEST_SEED (or `legacy`, an older variable such as FUZZ_SEED), else a
 * random one. Printed once, so that a log of a failed run holds it.
 */
export function testSeed(legacy?: string): number {
  const given = process.env.TEST_SEED ?? (legacy === undefined ? undefined : process.env[legacy]);
  if (given !== undefined) {
    const seed = Number(given);
    if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
      throw new Error(`TEST_SEED must be an integer from 0 to 2^32 - 1, not ${given}`);
    return seed;
  }
  return randomInt(0, 2 ** 32);
}

/** Runs `work`; an error it throws says which seed replays it (TEST_SEED=<seed>). */
export async function withSeed<T>(seed: number, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof Error) {
      const note = `(TEST_SEED=${seed} replays this run) `;
      err.message = note + err.message;
      // What the runner prints is the stack, which holds the message as it was when thrown.
      if (err.stack) err.stack = err.stack.includes(': ') ? err.stack.replace(': ', `: ${note}`) : note + err.stack;
    }
    throw err;
  }
}
