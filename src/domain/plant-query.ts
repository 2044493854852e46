// What a client may ask of the list of plants: a page in id order after a cursor, narrowed by
// tag and by words of the name. The stores answer it with their own indexes.

/** One page's question to a store. Filters combine: a plant must pass every one given. */
export interface PlantListQuery {
  /** Only plants with an id greater than this (keyset paging). */
  after?: bigint;
  /** Only plants whose tag is exactly one of these (at least one when given). */
  tags?: readonly string[];
  /**
   * Only plants whose name holds every one of these words: `searchWords` of the search text (at
   * least one), looked up as they are among the words `searchWords` gave for each name.
   */
  search?: readonly string[];
}
