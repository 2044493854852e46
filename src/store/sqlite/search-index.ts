import type Database from 'better-sqlite3';
import { searchWords } from '../../domain/search-words.js';

/**
 * What plants_fts indexes for a name: its words under the search's one rule (searchWords), one
 * space between them. plants_fts splits only at spaces and folds nothing else (FTS5's `ascii`
 * tokenizer: every character outside ASCII belongs to a word, and these words hold no ASCII but
 * lower-case letters and digits), so its tokens are exactly these words.
 */
export function indexedWords(name: string): string {
  return searchWords(name).join(' ');
}

/** The SQL function that gives a name's indexedWords, for the statements that fill plants_fts in bulk. */
export const INDEXED_WORDS_FUNCTION = 'plant_search_words';

/**
 * Registers INDEXED_WORDS_FUNCTION on a connection: the migration that fills plants_fts, and a
 * restore, call it once per plant from one INSERT … SELECT. It is this process's function, not
 * a part of the file: nothing the file keeps (no trigger, no index) refers to it.
 */
export function registerIndexedWords(db: Database.Database): void {
  db.function(INDEXED_WORDS_FUNCTION, { deterministic: true }, (name: unknown) => indexedWords(String(name)));
}
