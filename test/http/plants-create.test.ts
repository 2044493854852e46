// POST /plants: the values it accepts and refuses. Requests go to the app built in-process,
// plants are read back with exact bigint ids through the API (storedPlant) or the way
// `plant-store export` reads them, on every store.
// The body's framing, media type and size are in plants-create-body.test.ts, duplicate ids in
// plants-create-duplicates.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readStoredPlants } from '../support/db.js';
import { assertError, usePlantServer } from '../support/plants.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const store of stores) {
  describe(`POST /plants values [${store}]`, suiteOptions(store), () => {
    const p = usePlantServer(store);
    const { freshId, post, accepted, stored } = p;

    describe('POST /plants: the 200 body', () => {
      it('is exactly {"name","tag"} without the id', async () => {
        const id = freshId();
        const r = await post(`{"id":${id},"name":"Monstera","tag":"tropical"}`);
        assert.equal(r.status, 200);
        assert.match(String(r.headers['content-type']), /^application\/json(;|$)/);
        assert.equal(r.text, '{"name":"Monstera","tag":"tropical"}');
        assert.deepEqual(await stored(BigInt(id)), { id: BigInt(id), name: 'Monstera', tag: 'tropical' });
      });

      it('tag is optional: absent tag is stored as null and not echoed', async () => {
        const id = freshId();
        await accepted(`{"id":${id},"name":"Fern"}`, '{"name":"Fern"}');
        assert.deepEqual(await stored(BigInt(id)), { id: BigInt(id), name: 'Fern', tag: null });
      });

      it('an empty tag "" is stored and echoed, distinct from an absent tag', async () => {
        const id = freshId();
        await accepted(`{"id":${id},"name":"Fern","tag":""}`, '{"name":"Fern","tag":""}');
        assert.equal((await await stored(BigInt(id)))?.tag, '');
      });
    });

    describe('POST /plants: name and tag lengths in code points', () => {
      it('accepts a 256-emoji name and a 64-emoji tag, stored exactly', async () => {
        const id = freshId();
        const name = '🌿'.repeat(256);
        const tag = '🌵'.repeat(64);
        await accepted(JSON.stringify({ id, name, tag }), JSON.stringify({ name, tag }));
        assert.deepEqual(await stored(BigInt(id)), { id: BigInt(id), name, tag });
      });

      it('accepts a 1-character name and a 256-character ASCII name', async () => {
        await accepted(`{"id":${freshId()},"name":"x"}`, '{"name":"x"}');
        const name = 'a'.repeat(256);
        await accepted(`{"id":${freshId()},"name":"${name}"}`, `{"name":"${name}"}`);
      });

      it('refuses a 257-character name, an empty name and a 65-character tag', async () => {
        for (const name of ['🌿'.repeat(257), 'a'.repeat(257), '']) {
          const id = freshId();
          assertError(await post(JSON.stringify({ id, name })), 400, 'name');
          assert.equal(await stored(BigInt(id)), undefined);
        }
        for (const tag of ['🌵'.repeat(65), 't'.repeat(65)]) {
          assertError(await post(JSON.stringify({ id: freshId(), name: 'x', tag })), 400, 'tag');
        }
      });
    });

    describe('POST /plants: int64 ids', () => {
      for (const literal of ['9007199254740993', '9223372036854775807', '-9223372036854775808', '0', '-1']) {
        it(`stores ${literal} digit for digit`, async () => {
          await accepted(`{"id":${literal},"name":"edge ${literal}"}`, `{"name":"edge ${literal}"}`);
          assert.deepEqual(await stored(BigInt(literal)), { id: BigInt(literal), name: `edge ${literal}`, tag: null });
        });
      }

      it('9007199254740993 is not confused with 9007199254740992', async () => {
        assert.equal(await stored(9007199254740992n), undefined);
      });

      for (const literal of ['9223372036854775808', '-9223372036854775809', '18446744073709551616']) {
        it(`refuses the out-of-range id ${literal}`, async () => {
          assertError(await post(`{"id":${literal},"name":"x"}`), 400, 'id');
        });
      }

      it('accepts 1.0 as 1 and 1e3 as 1000', async () => {
        await accepted('{"id":1.0,"name":"one"}', '{"name":"one"}');
        await accepted('{"id":1e3,"name":"thousand"}', '{"name":"thousand"}');
        assert.equal((await await stored(1n))?.name, 'one');
        assert.equal((await await stored(1000n))?.name, 'thousand');
      });

      for (const [what, value] of [
        ['1.5', '1.5'],
        ['a string', '"1"'],
        ['true', 'true'],
        ['null', 'null'],
        ['1e400', '1e400'],
        ['an object', '{}'],
      ] as const) {
        it(`refuses an id that is ${what}`, async () => {
          assertError(await post(`{"id":${value},"name":"bad id"}`), 400, 'id');
        });
      }

      it('equivalent spellings of one id are the same id, kept exactly', async () => {
        await accepted('{"id":9223372036854775000,"name":"spelled"}', '{"name":"spelled"}');
        for (const spelling of [
          '9.223372036854775e18',
          '9223372036854775000.000',
          '92233720368547750000e-1',
          '922337203685477500e1',
        ]) {
          await accepted(`{"id":${spelling},"name":"spelled"}`, '{"name":"spelled"}');
          assertError(await post(`{"id":${spelling},"name":"other"}`), 409);
        }
        const rows = (await readStoredPlants(p.server.services.store)).filter((p) => p.id === 9223372036854775000n);
        assert.deepEqual(rows, [{ id: 9223372036854775000n, name: 'spelled', tag: null }]);
        assert.equal(await stored(9223372036854774784n), undefined, 'the id went through a float');
      });

      for (const literal of [
        '9223372036854775807.5',
        '9.2233720368547758075e18',
        '1e-400',
        '0.1',
        `1${'0'.repeat(400)}`,
      ]) {
        it(`refuses the id ${literal.length > 30 ? `${literal.slice(0, 12)}…` : literal}`, async () => {
          assertError(await post(`{"id":${literal},"name":"x"}`), 400, 'id');
        });
      }

      it('refuses a missing id', async () => {
        assertError(await post('{"name":"no id"}'), 400, 'id');
      });
    });

    describe('POST /plants: string values', () => {
      it('refuses a null tag', async () => {
        assertError(await post(`{"id":${freshId()},"name":"x","tag":null}`), 400, 'tag');
      });

      for (const value of ['5', 'true', 'null', '{}', '["x"]']) {
        it(`refuses a name that is ${value}`, async () => {
          assertError(await post(`{"id":${freshId()},"name":${value}}`), 400, 'name');
        });
      }

      it('refuses a missing name', async () => {
        assertError(await post(`{"id":${freshId()}}`), 400, 'name');
      });

      it('refuses NUL in name or tag', async () => {
        const id = freshId();
        assertError(await post(`{"id":${id},"name":"a\\u0000b"}`), 400, 'name');
        assertError(await post(`{"id":${id},"name":"ab","tag":"\\u0000"}`), 400, 'tag');
        assert.equal(await stored(BigInt(id)), undefined);
      });

      it('refuses a lone surrogate escape in a value and in a member name', async () => {
        const id = freshId();
        assertError(await post(`{"id":${id},"name":"\\ud800"}`), 400);
        assertError(await post(`{"id":${id},"name":"x","tag":"a\\udc00"}`), 400);
        assertError(await post(`{"id":${id},"name":"x","other":"\\ud83c"}`), 400);
        assertError(await post(`{"id":${id},"name":"x","\\ud800":1}`), 400);
        assert.equal(await stored(BigInt(id)), undefined);
      });

      it('stores a surrogate pair exactly, escaped or raw', async () => {
        const a = freshId();
        await accepted(`{"id":${a},"name":"\\ud83c\\udf3f","tag":"\\u00e9"}`, '{"name":"🌿","tag":"é"}');
        assert.deepEqual(await stored(BigInt(a)), { id: BigInt(a), name: '🌿', tag: 'é' });
        const b = freshId();
        await accepted(`{"id":${b},"name":"🌿 Fern"}`, '{"name":"🌿 Fern"}');
        assert.equal((await await stored(BigInt(b)))?.name, '🌿 Fern');
      });
    });

    describe('POST /plants: nothing is altered on the way to disk', () => {
      it('NFC and NFD spellings are different names, each stored exactly', async () => {
        const id = freshId();
        const nfd = 'Cafe\u0301';
        const nfc = 'Caf\u00e9';
        await accepted(`{"id":${id},"name":"${nfd}"}`, JSON.stringify({ name: nfd.normalize('NFD') }));
        assertError(await post(`{"id":${id},"name":"${nfc}"}`), 409);
        assert.equal((await await stored(BigInt(id)))?.name, 'Cafe\u0301');
      });

      it('whitespace, escapes and invisible characters are kept', async () => {
        const id = freshId();
        const name = ' \t lead and trail \n\u2028\ufeff\u200b ';
        const tag = '\\"/\u007f';
        const r = await post(JSON.stringify({ id, name, tag }));
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(JSON.parse(r.text), { name, tag });
        assert.deepEqual(await stored(BigInt(id)), { id: BigInt(id), name, tag });
      });
    });

    describe('POST /plants: unknown properties', () => {
      it('are neither echoed nor stored', async () => {
        const id = freshId();
        await accepted(`{"id":${id},"name":"x","color":"green","price":1.5,"nested":{"a":[1]}}`, '{"name":"x"}');
        assert.deepEqual(await stored(BigInt(id)), { id: BigInt(id), name: 'x', tag: null });
      });

      it('__proto__, constructor and prototype keys are plain unknown properties', async () => {
        const id = freshId();
        const body =
          `{"id":${id},"name":"p","__proto__":{"tag":"evil","polluted":true},` +
          `"constructor":{"prototype":{"tag":"evil"}},"prototype":{"tag":"evil"}}`;
        await accepted(body, '{"name":"p"}');
        assert.deepEqual(await stored(BigInt(id)), { id: BigInt(id), name: 'p', tag: null });
        // Nothing leaked into later requests either.
        const next = freshId();
        await accepted(`{"id":${next},"name":"after"}`, '{"name":"after"}');
        assert.equal((await await stored(BigInt(next)))?.tag, null);
      });
    });
  });
}
