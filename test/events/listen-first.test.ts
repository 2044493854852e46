// Webhooks go out only from a server that listens (src/http/plugins/lifecycle.ts): a start that
// fails to listen (its port taken, its host unknown) is ready first, and must not have sent
// deliveries meanwhile that its failure then cuts short. On both stores.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { addWebhook } from '../../src/use-cases/webhooks.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { pollUntil } from '../support/poll.js';
import { FAST_WEBHOOKS, Receiver } from '../support/receiver.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const kind of stores) {
  describe(`webhooks of a server that is ready but not listening [${kind}]`, suiteOptions(kind), () => {
    let t: TestApp;
    const receiver = new Receiver();
    after(async () => {
      await t?.close();
      await receiver.close();
    });

    it('stay in the outbox until it listens, then go out', async () => {
      await receiver.start();
      t = await buildTestApp({ store: kind, env: FAST_WEBHOOKS, webhooksOnListen: true });
      await addWebhook(t.services.store, t.services.config, receiver.url, ['plant.created']);
      const created = await t.inject({
        method: 'POST',
        path: '/plants',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: '{"id":1,"name":"Fern"}',
      });
      assert.equal(created.status, 200);
      // Many of the dispatcher's polls (50 ms here) go by while ready.
      await sleep(600);
      assert.equal(receiver.requests.length, 0, 'a webhook went out before the server listened');
      await t.listen();
      assert.ok(await pollUntil(async () => receiver.requests.length === 1, 10_000), 'no webhook once listening');
    });
  });
}
