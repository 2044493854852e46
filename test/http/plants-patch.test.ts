// PATCH /plants/{id} with a JSON merge patch (RFC 7396) on both stores: the fields it names
// change, the others stay, `tag: null` removes the tag, and only a real change is announced.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant, send } from '../support/http.js';
import { stores, suiteOptions } from '../support/stores.js';

const MERGE_PATCH = 'application/merge-patch+json';

for (const store of stores) {
  describe(`PATCH /plants/{id} [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    const auth = () => ({ authorization: `Bearer ${server.token}` });
    const patch = (id: bigint | string, body: string, headers: Record<string, string> = {}) =>
      send(server, {
        method: 'PATCH',
        path: `/plants/${id}`,
        headers: { ...auth(), 'content-type': MERGE_PATCH, ...headers },
        body,
      });
    const read = async (id: bigint) => (await send(server, { path: `/plants/${id}`, headers: auth() })).text;
    let next = 1n;
    async function plant(body: string): Promise<bigint> {
      const id = next++;
      assert.equal((await postPlant(server, server.token, `{"id":${id},${body}}`)).status, 200);
      return id;
    }

    before(async () => {
      server = await buildTestApp({ store });
      await server.services.store.webhooks.insertEndpoint({
        id: 'ep_patch',
        url: 'http://127.0.0.1:9/hook',
        events: ['plant.updated'],
        secret: 'whsec_AAAA',
        enabled: true,
        disabledReason: null,
        createdAt: new Date(),
      });
    });
    after(() => server.close());

    it('changes the fields the patch names and keeps the others', async () => {
      const id = await plant('"name":"Monstera","tag":"tropical"');
      const retag = await patch(id, '{"tag":"climber"}');
      assert.equal(retag.status, 200);
      assert.equal(retag.text, '{"name":"Monstera","tag":"climber"}');
      assert.equal(await read(id), `{"id":${id},"name":"Monstera","tag":"climber"}`);
      assert.equal(
        (await patch(id, '{"name":"Swiss cheese plant"}')).text,
        '{"name":"Swiss cheese plant","tag":"climber"}',
      );
      assert.equal((await patch(id, `{"id":${id},"tag":""}`)).text, '{"name":"Swiss cheese plant","tag":""}');
      assert.equal((await patch(id, '{"tag":null}')).text, '{"name":"Swiss cheese plant"}', 'null removes the tag');
      assert.equal(await read(id), `{"id":${id},"name":"Swiss cheese plant"}`);
      const etag = (await patch(id, '{}')).headers.etag;
      assert.equal(etag, (await send(server, { path: `/plants/${id}`, headers: auth() })).headers.etag);
    });

    it('announces a change (plant.updated) and nothing for a patch that changes nothing', async () => {
      const id = await plant('"name":"Fern"');
      const pending = () => server.services.store.webhooks.countPendingDeliveries();
      const before = await pending();
      assert.equal((await patch(id, '{"tag":"shade"}')).status, 200);
      assert.equal(await pending(), before + 1);
      for (const body of ['{}', '{"tag":"shade"}', '{"name":"Fern","tag":"shade"}']) {
        assert.equal((await patch(id, body)).status, 200);
      }
      const noTag = await plant('"name":"Moss"');
      assert.equal((await patch(noTag, '{"tag":null}')).status, 200);
      assert.equal(await pending(), before + 1, 'no event for a patch that changed nothing');
    });

    it('refuses what a replacement refuses, and members a plant does not have (400), changing nothing', async () => {
      const id = await plant('"name":"Aloe","tag":"succulent"');
      const cases: [string, RegExp][] = [
        ['{"name":null}', /name must be a string/],
        ['{"name":""}', /name must have at least 1 character/],
        ['{"tag":5}', /tag must be/],
        [`{"tag":"${'x'.repeat(65)}"}`, /tag must have at most 64 characters/],
        ['{"nmae":"typo"}', /nmae/],
        [`{"id":${id + 1000n},"name":"x"}`, /must equal the id in the path/],
        ['[]', /must be a JSON object/],
        ['{"name":"a","name":"b"}', /duplicate/],
      ];
      for (const [body, message] of cases) {
        const res = await patch(id, body);
        assert.equal(res.status, 400, body);
        assert.match((res.json as { message: string }).message, message, body);
      }
      assert.equal(await read(id), `{"id":${id},"name":"Aloe","tag":"succulent"}`);
    });

    it('takes application/merge-patch+json only (415 otherwise, before the body is read)', async () => {
      const id = await plant('"name":"Cactus"');
      for (const type of ['application/json', 'text/plain', 'application/merge-patch+json; charset=latin1']) {
        const res = await patch(id, '{"tag":"desert"}', { 'content-type': type });
        assert.equal(res.status, 415, type);
        assert.match((res.json as { message: string }).message, /application\/merge-patch\+json/);
      }
      assert.equal(
        (await patch(id, '{"tag":"desert"}', { 'content-type': `${MERGE_PATCH}; charset=UTF-8` })).status,
        200,
      );
      assert.equal(await read(id), `{"id":${id},"name":"Cactus","tag":"desert"}`);
    });

    it('is 404 for a missing plant, 412 for a stale If-Match, and needs plants:write', async () => {
      assert.equal((await patch(424242n, '{"tag":"x"}')).status, 404);
      const id = await plant('"name":"Ivy"');
      const etag = (await patch(id, '{"tag":"one"}')).headers.etag as string;
      assert.equal((await patch(id, '{"tag":"two"}', { 'if-match': etag })).status, 200);
      assert.equal((await patch(id, '{"tag":"three"}', { 'if-match': etag })).status, 412);
      assert.equal(await read(id), `{"id":${id},"name":"Ivy","tag":"two"}`);
      const { createToken } = await import('../../src/use-cases/create-token.js');
      const reader = await createToken(server.services.store, { name: 'reader', scopes: ['plants:read'] });
      const refused = await patch(id, '{"tag":"x"}', { authorization: `Bearer ${reader.token}` });
      assert.equal(refused.status, 403);
    });
  });
}
