// A corpus of plant names that text searches split and fold in different ways (scripts,
// compatibility forms, accents typed precomposed or not, joiners, case pairs, punctuation), and
// searches for them; what each search must find is derived from the domain's one rule.
import { searchWords } from '../../src/domain/search-words.js';

/** Names that each store's own text search split or folded its own way, and their neighbours. */
export const NAMES = [
  'x² plant',
  'άλφα plant',
  'हिन्दी plant',
  'Café au lait',
  'Cafe\u0301 noir',
  '½ pot',
  'ﬁcus ﬂower',
  'Ελληνικά φυτά',
  'ΣΟΦΙΑΣ rose',
  'Ёлка и йод',
  'Щавель конский',
  '羽衣甘蓝 plant',
  '日本のサボテン',
  'ｶﾞｼﾞｭﾏﾙ tree',
  '한국어 식물',
  '\u1112\u1161\u11ab\u1100\u116e\u11a8 jamo',
  '🌵 cactus 🌵',
  '👨‍👩‍👧 family fern',
  'می‌خواهم گل',
  'Mon\u00adstera',
  'zero\u200bwidth',
  'İstanbul lily',
  'IRMAK fern',
  'ırmak moss',
  'Straße tree',
  'STRASSE bush',
  'Aloe 2.5',
  'Philodendron 10-12cm',
  "Bird's-nest fern",
  'Devil’s ivy',
  '--- !!! ...',
  '🌿🌵',
  'Ｆｕｌｌ width',
  'Łódź orchid',
  '١٢٣ arabic digits',
  'Ⅻ roman',
];

/** Searches beyond the names themselves and each of their pieces. */
const SEARCHES = [
  'x',
  'x2',
  'x²',
  'αλφα',
  'ΆΛΦΑ',
  'ह',
  'हिन्दी',
  'cafe',
  'CAFÉ',
  'café noir',
  '1',
  '2',
  '1/2',
  'ficus',
  'flower',
  'ελληνικα',
  'σοφιας',
  'σοφιασ',
  'елка',
  'иод',
  'йод',
  'щавель',
  '甘蓝',
  'ガジュマル',
  'サボテン',
  '한국어',
  '한국',
  'cactus',
  '🌵',
  'family',
  '👨‍👩‍👧',
  'میخواهم',
  'monstera',
  'mon',
  'zero',
  'zerowidth',
  'istanbul',
  'i̇stanbul',
  'irmak',
  'ırmak',
  'strasse',
  'straße',
  'STRAẞE',
  '2.5',
  '5',
  '12',
  '12cm',
  'bird s',
  'birds',
  'devil',
  '!!!',
  'full',
  'lodz',
  'łodz',
  '123',
  '١٢٣',
  'xii',
  'plant',
  'plant x',
  'fern',
];

/**
 * The ids of `plants` (by id, their names) that the search `q` must find under the rule, in
 * order; 400 when `q` holds no word.
 */
export function found(plants: Map<number, string>, q: string): number[] | 400 {
  const want = searchWords(q);
  if (want.length === 0) return 400;
  return [...plants]
    .filter(([, name]) => want.every((w) => searchWords(name).includes(w)))
    .map(([id]) => id)
    .sort((a, b) => a - b);
}

/** Every search the corpus asks: the list above, each name, and each piece of a name between spaces. */
export const searches = [...new Set([...SEARCHES, ...NAMES, ...NAMES.flatMap((n) => n.split(' '))])].filter(Boolean);
