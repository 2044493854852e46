// What a client may ask of the list of plants: a page in id order after a cursor, narrowed by
// tag and by words of the name. The stores answer it with their own indexes.

/** One page's question to a store. Filters combine: a plant must pass every one given. */
export interface PlantListQuery {
  /** Only plants with an id greater than this (keyset paging). */
  after?: bigint;
  /** Only plants whose tag is exactly one of these (at least one when given). */
  tags?: readonly string[];
  /**
   * Only plants whose name holds every word of this text, whole words, ignoring case and the
   * accents of Latin letters. Each store splits it into words as its text search splits names.
   */
  search?: string;
}

/** At most this many `tag` values in one query: each is one ordered walk of the tag index. */
export const MAX_TAGS = 10;

/** True when `text` holds something a search can match: a letter or a digit. */
export function searchable(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}
