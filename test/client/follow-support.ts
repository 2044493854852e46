// What the tests of followChanges share: following until n changes came, and the log to compare with.
import { followChanges, type Change, type FollowOptions, type PlantStoreClient } from '../../src/client/index.js';
// Retries come quickly in tests; the defaults (250 ms doubling to 10 s) are for real networks.
export const FAST = { minDelayMs: 20, maxDelayMs: 200 } as const;

/** The first `n` changes the follower yields (then the loop ends, as a caller's `break` does). */
export async function take(options: FollowOptions, n: number, onEach?: (c: Change) => unknown): Promise<Change[]> {
  const got: Change[] = [];
  if (n === 0) return got;
  for await (const change of followChanges(options)) {
    got.push(change);
    await onEach?.(change);
    if (got.length === n) break;
  }
  return got;
}

/** The log after `from`, as the JSON pages give it: what the follower must have yielded. */
export async function logAfter(client: PlantStoreClient, from: bigint): Promise<Change[]> {
  const { data } = await client.GET('/plants/changes', { params: { query: { after: from, limit: 1000 } } });
  return data as Change[];
}

export const positionOf = async (client: PlantStoreClient): Promise<bigint> =>
  BigInt((await client.GET('/plants', { params: { query: { limit: 1 } } })).response.headers.get('change-position')!);
