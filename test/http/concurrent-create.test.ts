import { after, before, describe, it } from 'node:test';
import { assertCreatedOnce, raceCreate } from '../support/race.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const store of stores) {
  describe(`concurrent creation of one id on one instance [${store}]`, suiteOptions(store), () => {
    let server: ServerProcess;
    before(async () => {
      server = await startServer({ store });
    });
    after(() => server.dispose());

    it('creates it once: one 200 and 409s for different names, every time', async () => {
      for (let round = 0; round < 10; round++) {
        const id = 9_007_199_254_740_993n + BigInt(round);
        const race = await raceCreate([server.url], server.token, id, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
        await assertCreatedOnce([server.url], server.token, id, race);
      }
    });

    it('answers 200 to every one of identical concurrent creations', async () => {
      const race = await raceCreate([server.url], server.token, -42n, Array(8).fill('Same'));
      await assertCreatedOnce([server.url], server.token, -42n, race);
    });
  });
}
