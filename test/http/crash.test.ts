// SIGKILL under write load, on each store: every plant acknowledged before the kill is there
// when the store is served again, and identical retries of them are 200.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helper.js';
import { listAllPlants, postPlant } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { startServer } from '../support/server.js';
import { stores, suiteOptions } from '../support/stores.js';

const WRITERS = 8;
const MAX_WRITES = 20_000;

for (const store of stores) {
  describe(`SIGKILL under write load [${store}]`, suiteOptions(store), () => {
    it('loses no acknowledged plant', async () => {
      const first = await startServer({ store });
      let second: TestApp | undefined;
      try {
        const acked = new Map<bigint, string>();
        let next = 0;
        let killed = false;
        const writer = async () => {
          while (!killed && next < MAX_WRITES) {
            const id = 2n ** 62n + BigInt(next++);
            const name = `plant ${id} 🌿`;
            try {
              const res = await postPlant(first.url, first.token, `{"id":${id},"name":"${name}"}`);
              assert.equal(res.status, 200, res.text);
              acked.set(id, name);
            } catch (err) {
              // A request the kill cut off has no answer, so no promise was made for it.
              if (killed) return;
              throw err;
            }
          }
        };
        const writers = Array.from({ length: WRITERS }, writer);
        // Bounded: the writers stop by themselves after MAX_WRITES.
        assert.ok(await pollUntil(async () => acked.size >= 300, 60_000), 'the load got going');
        killed = true;
        await first.kill();
        await Promise.all(writers);

        // Served again in-process: the process killed is the subject, not the one after.
        second = await buildTestApp({ databaseUrl: first.databaseUrl, token: first.token });
        const stored = new Map((await listAllPlants(second, second.token)).map((p) => [p.id, p.name]));
        const missing = [...acked].filter(([id, name]) => stored.get(id) !== name);
        assert.deepEqual(missing, [], `${missing.length} of ${acked.size} acknowledged plants are missing`);
        // And the store agrees with what was acknowledged: identical retries are 200, not conflicts.
        for (const [id, name] of [...acked].slice(-5)) {
          const retry = await postPlant(second, second.token, `{"id":${id},"name":"${name}"}`);
          assert.equal(retry.status, 200, retry.text);
        }
      } finally {
        await second?.close();
        await first.dispose();
      }
    });
  });
}
