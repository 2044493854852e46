// A webhook attempt in flight when `plant-store serve` stops, on both stores: the server cuts it
// short and records it before the store closes, so `webhook list` says why (the manual, Steering
// deliveries: `interrupted: the server stopped`) and the log has no error about a closed store.
// The built server, since the order of its shutdown is what is under test.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { cli } from '../support/cli.js';
import { postPlant } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { FAST_WEBHOOKS, Receiver } from '../support/receiver.js';
import { startServer } from '../support/server.js';
import { createMigratedTestStore, stores, suiteOptions } from '../support/stores.js';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

for (const kind of stores) {
  describe(`a webhook attempt in flight when the server stops [${kind}]`, suiteOptions(kind), () => {
    it('is cut short and recorded before the store closes: its reason is "interrupted: the server stopped"', async () => {
      const hanging = await new Receiver().start();
      hanging.respond = () => 'hang';
      cleanups.push(() => hanging.close());
      const store = await createMigratedTestStore(kind);
      cleanups.push(() => store.drop());
      const env = { DATABASE_URL: store.databaseUrl, ...FAST_WEBHOOKS };
      const added = await cli(['webhook', 'add', hanging.url], env);
      assert.equal(added.status, 0, added.stderr);
      const endpoint = added.stdout.split('\n')[0]!;

      const s = await startServer({
        databaseUrl: store.databaseUrl,
        env: { ...FAST_WEBHOOKS, WEBHOOK_TIMEOUT_MS: '60000' },
      });
      cleanups.push(() => s.dispose());
      assert.equal((await postPlant(s.url, s.token, '{"id":1,"name":"Fern"}')).status, 200);
      assert.ok(await pollUntil(async () => hanging.requests.length === 1, 15_000), 'the attempt is under way');

      // 'close', not 'exit': the log has been read to its last line by then.
      const closed = once(s.proc, 'close');
      s.proc.kill('SIGTERM');
      const [code] = (await closed) as [number | null];
      const log = s.stdout.map((l) => JSON.parse(l) as { level: number; msg: string });
      assert.deepEqual(
        log.filter((l) => l.level >= 50),
        [],
        'no error in the log (an outcome written to a closed store)',
      );
      assert.equal(code, 0);
      assert.equal(log.at(-1)?.msg, 'stopped');

      const listed = await cli(['webhook', 'list', '--json'], env);
      const [entry] = JSON.parse(listed.stdout) as {
        endpoint: { id: string };
        lastFailure: { reason: string } | null;
      }[];
      assert.equal(entry?.endpoint.id, endpoint);
      assert.equal(entry?.lastFailure?.reason, 'interrupted: the server stopped');
    });
  });
}
