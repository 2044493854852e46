// Every plant of a listing, page after page: GET /plants, then each page its Link names, until a
// page names none. Keyset paging on the id: a plant created or deleted meanwhile never makes the
// walk skip or repeat another (the manual: Finding plants).
import type { PlantStoreClient } from './client-type.js';
import { nextQuery } from './link.js';
import type { components, operations } from './schema.js';

type NewPlant = components['schemas']['NewPlant'];

/** The listing's filters and page size, as GET /plants takes them, and how to watch or stop it. */
export type AllPlantsOptions = NonNullable<operations['listPlants']['parameters']['query']> & {
  /** Aborts the request under way: the iteration then throws the abort's reason. */
  signal?: AbortSignal;
  /**
   * Told of each page's response before its plants are yielded: the first page's
   * `Change-Position` is where followChanges takes over from the listing.
   */
  onPage?: (response: Response) => void;
};

/** A page of the listing was refused (400, 401, 403, 429, 503...), with the server's Error body. */
export class ListError extends Error {
  constructor(
    readonly status: number,
    serverMessage: string,
  ) {
    super(`listing the plants failed with ${status}: ${serverMessage}`);
    this.name = 'ListError';
  }
}

/**
 * Every plant the listing holds, in id order, asking for each next page as its Link gives it
 * (the filters kept, the cursor exact past 2^53):
 *
 *     for await (const plant of allPlants(client, { tag: ['tropical'], limit: 1000 })) use(plant);
 *
 * A refused page throws ListError; `after: <the last id yielded>` resumes the walk there.
 */
export async function* allPlants(
  client: Pick<PlantStoreClient, 'GET'>,
  options: AllPlantsOptions = {},
): AsyncGenerator<NewPlant, void, undefined> {
  const { signal, onPage, ...query } = options;
  let next: string | undefined;
  // The first page's position goes with the later pages, so they show every change up to it
  // whichever database serves them: a standby behind it could leave out a plant created before
  // it, which a client following the log from there would never see.
  let position: string | undefined;
  do {
    const following = next;
    const { data, error, response } = await client.GET('/plants', {
      params: { query, ...(position !== undefined && { header: { 'Change-Position': position } }) },
      // After the first page, the query is the Link's, whatever was asked first.
      ...(following !== undefined && { querySerializer: () => following }),
      ...(signal && { signal }),
    });
    if (!data) throw new ListError(response.status, error?.message ?? response.statusText);
    position ??= response.headers.get('change-position') ?? undefined;
    onPage?.(response);
    yield* data;
    next = nextQuery(response.headers.get('link'));
  } while (next !== undefined);
}
