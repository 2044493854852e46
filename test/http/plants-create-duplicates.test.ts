// POST /plants with an id that already exists: idempotent retry,
// conflict, and concurrent creation of one id.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readStoredPlants } from '../support/db.js';
import { assertError, usePlantServer } from '../support/plants.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const store of stores) {
  describe(`POST /plants duplicate ids [${store}]`, suiteOptions(store), () => {
    const p = usePlantServer(store);
    const { freshId, post, accepted, stored } = p;

    describe('POST /plants: duplicate ids', () => {
      it('an identical retry is 200 with the Plant and changes nothing', async () => {
        const id = freshId();
        for (const body of [
          `{"id":${id},"name":"Fern","tag":"green"}`,
          `{"name":"Fern","tag":"green","id":${id},"x":1}`,
        ]) {
          await accepted(body, '{"name":"Fern","tag":"green"}');
        }
        const noTag = freshId();
        await accepted(`{"id":${noTag},"name":"Fern"}`, '{"name":"Fern"}');
        await accepted(`{"id":${noTag},"name":"Fern"}`, '{"name":"Fern"}');
        assert.deepEqual(await stored(BigInt(id)), { id: BigInt(id), name: 'Fern', tag: 'green' });
        assert.deepEqual(await stored(BigInt(noTag)), { id: BigInt(noTag), name: 'Fern', tag: null });
      });

      it('a different name or tag is 409 and changes nothing', async () => {
        const id = freshId();
        await accepted(`{"id":${id},"name":"Fern","tag":"green"}`, '{"name":"Fern","tag":"green"}');
        for (const body of [
          `{"id":${id},"name":"Palm","tag":"green"}`,
          `{"id":${id},"name":"Fern","tag":"red"}`,
          `{"id":${id},"name":"Fern"}`,
          `{"id":${id},"name":"Fern","tag":""}`,
          `{"id":${id},"name":"fern","tag":"green"}`,
        ]) {
          assertError(await post(body), 409);
        }
        assert.deepEqual(await stored(BigInt(id)), { id: BigInt(id), name: 'Fern', tag: 'green' });
      });

      it('absent tag and "" tag conflict in both directions', async () => {
        const a = freshId();
        await accepted(`{"id":${a},"name":"Fern","tag":""}`, '{"name":"Fern","tag":""}');
        assertError(await post(`{"id":${a},"name":"Fern"}`), 409);
        assert.equal((await await stored(BigInt(a)))?.tag, '');
        const b = freshId();
        await accepted(`{"id":${b},"name":"Fern"}`, '{"name":"Fern"}');
        assertError(await post(`{"id":${b},"name":"Fern","tag":""}`), 409);
        assert.equal((await await stored(BigInt(b)))?.tag, null);
      });

      it('a conflict on an int64 edge id keeps the stored plant', async () => {
        await accepted('{"id":9223372036854775806,"name":"A"}', '{"name":"A"}');
        assertError(await post('{"id":9223372036854775806,"name":"B"}'), 409);
        assert.equal((await await stored(9223372036854775806n))?.name, 'A');
      });

      it('50 parallel identical POSTs of a new id: all 200, one row', async () => {
        const id = freshId();
        const body = `{"id":${id},"name":"Parallel","tag":"same"}`;
        const results = await Promise.all(Array.from({ length: 50 }, () => post(body)));
        for (const r of results) {
          assert.equal(r.status, 200, r.text);
          assert.equal(r.text, '{"name":"Parallel","tag":"same"}');
        }
        const rows = (await readStoredPlants(p.server.services.store)).filter((p) => p.id === BigInt(id));
        assert.deepEqual(rows, [{ id: BigInt(id), name: 'Parallel', tag: 'same' }]);
      });

      it('50 parallel POSTs of a new id with 50 names: one 200, 49 409, the winner is stored', async () => {
        const id = freshId();
        const names = Array.from({ length: 50 }, (_, i) => `racer-${i}`);
        const results = await Promise.all(names.map((name) => post(`{"id":${id},"name":"${name}"}`)));
        const winners = results.flatMap((r, i) => (r.status === 200 ? [names[i]!] : []));
        assert.equal(winners.length, 1, results.map((r) => r.status).join(','));
        for (const r of results) if (r.status !== 200) assertError(r, 409);
        assert.equal(results[names.indexOf(winners[0]!)]!.text, `{"name":"${winners[0]}"}`);
        const rows = (await readStoredPlants(p.server.services.store)).filter((p) => p.id === BigInt(id));
        assert.deepEqual(rows, [{ id: BigInt(id), name: winners[0], tag: null }]);
      });
    });
  });
}
