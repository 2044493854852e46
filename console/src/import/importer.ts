// An import through the public API, as `plant-store import` does it in the store: each plant is
// created unless the store holds it already, identical (unchanged) or different (refused, left as
// it is). Each batch first reads the stretch of ids it covers (GET /plants, keyset pages), so
// that what is already there is not sent; the rest goes in one POST /plants/batch, all or nothing:
// a refusal (`operations[i]: …`, a plant written meanwhile, a plant the API refuses) takes that
// line out and sends the others again.
import type { NewPlant } from '../../../src/client/index.js';
import { nextQuery } from '../../../src/client/link.js';
import { refusal, type Session } from '../session.js';
import { compareIds, idOf } from '../plants/rows.js';
import type { Item, Problem } from './batches.js';

export interface Counts {
  created: number;
  unchanged: number;
  refused: number;
}

/** Reading a stretch of ids stops after this many pages: past them, a plant is sent and the batch decides. */
const MAX_PAGES = 5;
const MIN_INT64 = -(2n ** 63n);

/** The store's plants with ids from the least to the greatest of the batch's (or fewer: MAX_PAGES). */
async function existing(session: Session, items: Item[]): Promise<Map<string, NewPlant>> {
  const ids = items.map((i) => idOf(i.plant)).sort(compareIds);
  const [least, greatest] = [BigInt(ids[0]!), ids.at(-1)!];
  const found = new Map<string, NewPlant>();
  let after: bigint | undefined = least === MIN_INT64 ? undefined : least - 1n;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = { limit: 1000, ...(after !== undefined && { after }) };
    const { data, error, response } = await session.client.GET('/plants', { params: { query } });
    if (error) throw new Error(refusal(response, error));
    for (const plant of data) found.set(idOf(plant), plant);
    const next = new URLSearchParams(nextQuery(response.headers.get('link')) ?? '').get('after');
    if (next === null || compareIds(next, greatest) >= 0) break;
    after = BigInt(next);
  }
  return found;
}

const same = (a: NewPlant, b: NewPlant) => a.name === b.name && a.tag === b.tag;
const conflict = (plant: NewPlant) => `plant ${idOf(plant)} already exists with a different name or tag; left as it is`;

/** Imports one batch; the counts and problems grow as it goes. */
export async function importBatch(
  session: Session,
  items: Item[],
  counts: Counts,
  problem: (p: Problem) => void,
): Promise<void> {
  if (items.length === 0) return;
  const there = await existing(session, items);
  let send: Item[] = [];
  for (const item of items) {
    const id = idOf(item.plant);
    const old = there.get(id);
    if (old === undefined) {
      send.push(item);
      // A later line of the same id meets this one, as the store would.
      there.set(id, item.plant);
    } else if (same(old, item.plant)) counts.unchanged++;
    else {
      counts.refused++;
      problem({ line: item.line, message: conflict(item.plant) });
    }
  }
  while (send.length > 0) {
    const operations = send.map((i) => ({ op: 'create' as const, plant: i.plant }));
    const { error, response } = await session.client.POST('/plants/batch', { body: { operations } });
    if (!error) {
      counts.created += send.length;
      return;
    }
    if (response.status === 503 || response.status === 429) {
      // Busy (the instance's batches at once, a rate limit): again after the time it asks for.
      await new Promise((r) => setTimeout(r, 1000 * Number(response.headers.get('retry-after') ?? 1)));
      continue;
    }
    const at = /^operations\[(\d+)\]: (.*)$/s.exec(error.message);
    if (!at) throw new Error(refusal(response, error));
    const index = Number(at[1]);
    counts.refused++;
    problem({ line: send[index]!.line, message: at[2]! });
    send = send.filter((_, i) => i !== index);
  }
}
