import { InvalidInputError, plantNotFound, plantPreconditionFailed } from '../domain/errors.js';
import type { PlantRecord } from '../domain/plant.js';
import { etagOf } from '../domain/plant-write.js';
import { failedPrecondition, type Preconditions } from '../domain/preconditions.js';
import { searchWords } from '../domain/search-words.js';
import type { OperationInput } from '../openapi/operation-types.js';
import type { Store } from '../store/store.js';

export interface PlantPage {
  plants: PlantRecord[];
  /** The change log's position before the page was read: every change up to it is in the page. */
  position: bigint;
  /** The cursor of the next page, when more plants follow. */
  nextAfter: bigint | undefined;
}

/**
 * The query of GET /plants, validated against its parameters: `limit` (its default filled in),
 * `after`, `tag` (any of these tags) and `q` (words the name must hold).
 */
export type PlantListInput = OperationInput<'listPlants'>['query'];

/**
 * One page of plants by id, filtered. One extra row is read to know whether another page follows.
 * The change log's position is read first, on the database the page is read from: a client that
 * lists from it and then follows the log from it misses no change (the manual, "Following the
 * store"). With `atLeast` (the request's Change-Position), the page shows every change up to it.
 */
export async function listPlants(
  store: Pick<Store, 'reads'>,
  query: PlantListInput,
  atLeast?: bigint,
): Promise<PlantPage> {
  const search = query.q === undefined ? undefined : searchWords(query.q);
  if (search?.length === 0)
    throw new InvalidInputError('q must hold at least one letter or digit: words are made of them');
  const on = await store.reads(atLeast);
  const { current: position } = await on.changes.bounds();
  const rows = await on.plants.list({ after: query.after, tags: query.tag, search }, query.limit + 1);
  const plants = rows.slice(0, query.limit);
  return { plants, position, nextAfter: rows.length > query.limit ? plants.at(-1)!.id : undefined };
}

/** One plant as read, with its ETag; `notModified` when If-None-Match names it (GET and HEAD answer 304). */
export interface PlantRead {
  plant: PlantRecord;
  etag: string;
  notModified: boolean;
}

/**
 * Reads one plant under the request's conditions: a missing plant is not found whatever they
 * say (RFC 9110 13.2.1), a failing If-Match refuses the read (412), a matching If-None-Match
 * makes it a not-modified answer. With `atLeast` (the request's Change-Position), the plant as
 * it is after every change up to it, or later.
 */
export async function getPlant(
  store: Pick<Store, 'reads'>,
  id: bigint,
  conditions?: Preconditions,
  atLeast?: bigint,
): Promise<PlantRead> {
  const plant = await (await store.reads(atLeast)).plants.get(id);
  if (!plant) throw plantNotFound(id);
  const etag = etagOf(plant);
  const failed = conditions && failedPrecondition(conditions, etag);
  if (failed === 'If-Match') throw plantPreconditionFailed(id, failed);
  return { plant, etag, notModified: failed === 'If-None-Match' };
}
