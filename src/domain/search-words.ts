// The one rule by which a text becomes the words a search compares (the manual, Finding plants). The
// words of a plant's name are what each store indexes, and a search asks for the words of its
// text: both stores store and look up exactly these strings, so they find the same plants by
// construction, whatever their own text search would have made of the name.

/**
 * Longest word kept, in code points: a name's own limit. Only the compatibility forms of some
 * characters grow past it (one `㌀` is four katakana), and such a word counts by its first 256
 * characters, in the index and in a search alike. It keeps an entry of PostgreSQL's word index
 * within its size limit (256 code points are at most 1,024 bytes).
 */
export const MAX_WORD_LENGTH = 256;

/** Invisible characters (soft hyphen, joiners, direction marks, variation selectors): as if absent. */
const INVISIBLE = /(?!\u200b)\p{Default_Ignorable_Code_Point}/gu;
/** The marks of the Combining Diacritical Marks block: the accents of Latin, Greek and Cyrillic. */
const ACCENTS = /[\u0300-\u036f]/gu;
/** Lower-case letters whose capitals are those of others: ß (SS), final ς (Σ), dotless ı (I). */
const SAME_CAPITAL: Readonly<Record<string, string>> = { ß: 'ss', ς: 'σ', ı: 'i' };
const FOLDED = /[ßςı]/gu;
/** Text in ASCII alone, which every step but the lower case leaves as it is. */
const ASCII = /^[\0-\x7f]*$/;
/** A word: a letter or digit, then letters, digits and the marks that go with them. */
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

/** A word cut to MAX_WORD_LENGTH code points. */
function cut(word: string): string {
  return word.length <= MAX_WORD_LENGTH ? word : Array.from(word).slice(0, MAX_WORD_LENGTH).join('');
}

/**
 * The distinct words of a text, in the order they first appear; empty when it holds none.
 *
 * 1. Compatibility decomposition (NFKD): `x²` is `x2`, `½` is `1⁄2`, `ﬁ` is `fi`, `Ｆ` is `F`, and
 *    an accented letter is its letter and its accents, however it was typed.
 * 2. Invisible characters are taken out (not the zero-width space, which separates words), and
 *    so are the accents U+0300-U+036F: `é` is `e`, `ά` is `α`, `й` is `и`, `İ` is `I`. Marks of
 *    other scripts stay (Devanagari's vowel signs are part of their word).
 * 3. Lower case, with ß as ss, ς as σ and ı as i; then composed again (NFC).
 * 4. A word is a run of letters, digits and marks that begins with a letter or a digit: anything
 *    else (spaces, punctuation, symbols, emoji) separates words.
 */
export function searchWords(text: string): string[] {
  const folded = ASCII.test(text)
    ? text.toLowerCase()
    : text
        .normalize('NFKD')
        .replace(INVISIBLE, '')
        .replace(ACCENTS, '')
        .toLowerCase()
        .replace(FOLDED, (c) => SAME_CAPITAL[c]!)
        .normalize('NFC');
  const words = folded.match(WORD);
  return words ? [...new Set(words.map(cut))] : [];
}
