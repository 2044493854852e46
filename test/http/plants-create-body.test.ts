// POST /plants: the body must be one I-JSON object, of type application/json (415) and at most
// 16 KiB (413).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { send } from '../support/http.js';
import { assertError, usePlantServer } from '../support/plants.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const store of stores) {
  describe(`POST /plants body [${store}]`, suiteOptions(store), () => {
    const p = usePlantServer(store);
    const { freshId, post, accepted, stored } = p;

    describe('POST /plants: the body must be one JSON object', () => {
      const cases: [string, string][] = [
        ['an array', '[]'],
        ['an array holding a plant', '[{"id":1,"name":"x"}]'],
        ['a number', '1'],
        ['a string', '"x"'],
        ['true', 'true'],
        ['null', 'null'],
        ['empty', ''],
        ['whitespace only', '  \n'],
        ['duplicate member names', '{"id":77,"name":"x","name":"y"}'],
        ['duplicate ids', '{"id":77,"id":78,"name":"x"}'],
        ['duplicate names after unescaping', '{"id":77,"name":"x","\\u006eame":"y"}'],
        ['trailing garbage', '{"id":77,"name":"x"}x'],
        ['a second object', '{"id":77,"name":"x"}{}'],
        ['truncated', '{"id":77,"name":"x"'],
        ['not JSON', '{id:77,name:"x"}'],
      ];
      for (const [what, body] of cases) {
        it(`refuses a body that is ${what}`, async () => {
          assertError(await post(body), 400);
        });
      }

      it('refuses an empty body sent with Content-Length: 0', async () => {
        assertError(await post('', { 'content-length': '0' }), 400);
      });

      it('refuses a POST with no body and no Content-Type with 400 (there is no body to type)', async () => {
        const r = await send(p.server, {
          method: 'POST',
          path: '/plants',
          headers: { authorization: `Bearer ${p.server.token}`, 'content-length': '0' },
        });
        assertError(r, 400);
      });

      it('refuses a leading byte order mark', async () => {
        assertError(await post(`\ufeff{"id":${freshId()},"name":"x"}`), 400);
      });

      it('refuses invalid UTF-8', async () => {
        const id = freshId();
        assertError(
          await post(
            Buffer.concat([Buffer.from(`{"id":${id},"name":"`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
          ),
          400,
        );
        assert.equal(await stored(BigInt(id)), undefined);
      });

      it('refuses nesting deeper than 32 levels, accepts 32 inside an unknown property', async () => {
        // The body object is level 1; its "u" property adds 31 more: 32 in all.
        const id = freshId();
        await accepted(`{"id":${id},"name":"deep","u":${'['.repeat(31)}${']'.repeat(31)}}`, '{"name":"deep"}');
        const id2 = freshId();
        await accepted(`{"id":${id2},"name":"deep","u":${'{"a":'.repeat(31)}1${'}'.repeat(31)}}`, '{"name":"deep"}');
        const id3 = freshId();
        assertError(await post(`{"id":${id3},"name":"deep","u":${'['.repeat(32)}${']'.repeat(32)}}`), 400);
        assertError(await post(`{"id":${id3},"name":"deep","u":${'['.repeat(5000)}${']'.repeat(5000)}}`), 400);
        assert.equal(await stored(BigInt(id3)), undefined);
      });
    });

    describe('POST /plants: content types', () => {
      for (const type of [
        'application/json; charset=utf-8',
        'Application/JSON',
        'application/json;charset=UTF-8',
        'application/json; charset="utf-8"; profile=plant',
        // A quoted value may hold ; and = (RFC 9110 5.6.6): this one has no charset parameter.
        'application/json; profile="a; charset=latin1"',
        'application/json ; charset="UTF-\\8";',
      ]) {
        it(`accepts ${type}`, async () => {
          const r = await post(`{"id":${freshId()},"name":"ct"}`, { 'content-type': type });
          assert.equal(r.status, 200, r.text);
        });
      }

      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/jsonx',
        'multipart/form-data',
        'application/json; charset=iso-8859-1',
        'application/json; charset="utf-8; x"',
        'application/json; profile="unterminated',
        'application/json; charset',
      ]) {
        it(`refuses ${type} with 415`, async () => {
          const id = freshId();
          assertError(await post(`{"id":${id},"name":"ct"}`, { 'content-type': type }), 415);
          assert.equal(await stored(BigInt(id)), undefined);
        });
      }

      it('refuses a body without Content-Type with 415', async () => {
        const id = freshId();
        const body = `{"id":${id},"name":"ct"}`;
        const r = await send(p.server, {
          method: 'POST',
          path: '/plants',
          headers: { authorization: `Bearer ${p.server.token}`, 'content-length': String(Buffer.byteLength(body)) },
          body,
        });
        assertError(r, 415);
        assert.equal(await stored(BigInt(id)), undefined);
      });
    });

    describe('POST /plants: body size', () => {
      /** Valid JSON of exactly `size` bytes. */
      function bodyOfSize(id: number, size: number): string {
        const head = `{"id":${id},"name":"big","pad":"`;
        const body = `${head}${'a'.repeat(size - head.length - 2)}"}`;
        assert.equal(Buffer.byteLength(body), size);
        return body;
      }

      it('accepts exactly 16 KiB', async () => {
        const id = freshId();
        const body = bodyOfSize(id, 16384);
        const r = await post(body, { 'content-length': '16384' });
        assert.equal(r.status, 200, r.text);
        assert.equal((await await stored(BigInt(id)))?.name, 'big');
      });

      it('refuses 16385 bytes with Content-Length with 413', async () => {
        const id = freshId();
        assertError(await post(bodyOfSize(id, 16385), { 'content-length': '16385' }), 413);
        assert.equal(await stored(BigInt(id)), undefined);
      });

      it('refuses 16385 bytes sent chunked without Content-Length with 413', async () => {
        const id = freshId();
        assertError(await post(bodyOfSize(id, 16385), { 'transfer-encoding': 'chunked' }), 413);
        assert.equal(await stored(BigInt(id)), undefined);
      });
    });
  });
}
