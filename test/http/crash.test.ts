import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listAllPlants, postPlant } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { stores, suiteOptions } from '../support/stores.js';

const WRITERS = 8;
const MAX_WRITES = 20_000;

for (const store of stores) {
  describe(`SIGKILL under write load [${store}]`, suiteOptions(store), () => {
    it('loses no acknowledged plant', async () => {
      const first = await startServer({ store });
      let second: ServerProcess | undefined;
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

        second = await startServer({ databaseUrl: first.databaseUrl, token: first.token });
        const stored = new Map((await listAllPlants(second.url, second.token)).map((p) => [p.id, p.name]));
        const missing = [...acked].filter(([id, name]) => stored.get(id) !== name);
        assert.deepEqual(missing, [], `${missing.length} of ${acked.size} acknowledged plants are missing`);
      } finally {
        await second?.kill();
        await first.dispose();
      }
    });
  });
}
