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
   * accents of Latin letters: `searchWords`' output, words separated by one space. Each store
   * folds them as its text search folds names.
   */
  search?: string;
}

/** A word: a letter or digit, then letters, digits and the marks that accent them. */
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

/**
 * The words of a search text, one space between them: anything but letters and digits separates
 * words, so `monstera-deliciosa` and `monstera, deliciosa` ask for the same two words on either
 * store, whichever way its text search would split punctuation. Empty when it holds none.
 */
export function searchWords(text: string): string {
  return (text.match(WORD) ?? []).join(' ');
}
