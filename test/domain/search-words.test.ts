// The search's one rule, as docs/reference/api.md states it (Finding plants): what makes a word, what folds,
// and what the stores need of the words (none holds a space, an ASCII capital or a quote, and
// none is longer than PostgreSQL's word index can hold).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_WORD_LENGTH, searchWords } from '../../src/domain/search-words.js';

describe('the words of a text', () => {
  it('are runs of letters, digits and their marks; anything else separates them', () => {
    const cases: [string, string[]][] = [
      ['Monstera deliciosa', ['monstera', 'deliciosa']],
      ['monstera-deliciosa, MONSTERA!', ['monstera', 'deliciosa']],
      ["Bird's-nest fern", ['bird', 's', 'nest', 'fern']],
      ['Devil’s ivy', ['devil', 's', 'ivy']],
      ['Aloe 2.5 / 10-12cm', ['aloe', '2', '5', '10', '12cm']],
      ['--- !!! ...', []],
      ['🌵 cactus 🌵', ['cactus']],
      ['🌿🌵', []],
      ['👨‍👩‍👧 family', ['family']],
      ['हिन्दी plant', ['हिन्दी', 'plant']],
      ['羽衣甘蓝 plant', ['羽衣甘蓝', 'plant']],
      ['日本のサボテン', ['日本のサボテン']],
      ['zero\u200bwidth', ['zero', 'width']],
      ['١٢٣ ٣', ['١٢٣', '٣']],
    ];
    for (const [text, words] of cases) assert.deepEqual(searchWords(text), words, text);
  });

  it('take compatibility forms as their plain letters and digits', () => {
    const cases: [string, string[]][] = [
      ['x² plant', ['x2', 'plant']],
      ['½ pot', ['1', '2', 'pot']],
      ['ﬁcus ﬂower', ['ficus', 'flower']],
      ['Ｆｕｌｌ width', ['full', 'width']],
      ['ｶﾞｼﾞｭﾏﾙ', ['ガジュマル']],
      ['Ⅻ', ['xii']],
      ['①', ['1']],
    ];
    for (const [text, words] of cases) assert.deepEqual(searchWords(text), words, text);
  });

  it('fold case and the accents of Latin, Greek and Cyrillic letters, however they were typed', () => {
    const same: string[][] = [
      ['Café', 'Cafe\u0301', 'CAFE', 'cafe'],
      ['άλφα', 'ΆΛΦΑ', 'αλφα', 'α\u0301λφα'],
      ['ёлка', 'елка', 'ЁЛКА'],
      ['йод', 'иод'],
      ['Straße', 'STRASSE', 'strasse', 'STRAẞE'],
      ['İstanbul', 'istanbul', 'ISTANBUL', 'ıstanbul'],
      ['ΣΟΦΙΑΣ', 'σοφιας', 'σοφιασ'],
      ['Mon\u00adstera', 'monstera'],
      ['می\u200cخواهم', 'میخواهم'],
      ['Ødegaard', 'ødegaard'],
    ];
    for (const group of same) {
      for (const text of group) assert.deepEqual(searchWords(text), searchWords(group[0]!), text);
    }
    // Letters of their own, not accented ones: they stay apart from their look-alikes.
    for (const [a, b] of [
      ['łodz', 'lodz'],
      ['ødegaard', 'odegaard'],
      ['हि', 'ह'],
      ['が', 'か'],
    ]) {
      assert.notDeepEqual(searchWords(a!), searchWords(b!), `${a} ${b}`);
    }
    assert.deepEqual(searchWords('ΑΣ.Β'), ['ασ', 'β'], 'a sigma before punctuation is the sigma of a word alone');
  });

  it('are distinct, in the order they first appear', () => {
    assert.deepEqual(searchWords('Fern fern FERN moss fern'), ['fern', 'moss']);
  });

  it('are cut at the longest word the index keeps', () => {
    const [long] = searchWords('㌀'.repeat(256));
    assert.equal(Array.from(long!).length, MAX_WORD_LENGTH);
    assert.ok(Buffer.byteLength(long!) <= 4 * MAX_WORD_LENGTH);
    assert.deepEqual(searchWords('㌀'.repeat(300)), [long]);
  });

  it('of any character are its own words again, and hold no space, ASCII capital or quote', () => {
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      for (const word of searchWords(`${c}a${c}`)) {
        const again = searchWords(word);
        if (again.length !== 1 || again[0] !== word || /[\sA-Z"]/u.test(word)) wrong.push(cp.toString(16));
      }
    }
    assert.deepEqual(wrong, []);
  });
});
