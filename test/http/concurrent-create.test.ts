import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helper.js';
import { assertCreatedOnce, raceCreate } from '../support/race.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const store of stores) {
  describe(`concurrent creation of one id on one instance [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    before(async () => {
      server = await buildTestApp({ store });
    });
    after(() => server.close());

    it('creates it once: one 200 and 409s for different names, every time', async () => {
      for (let round = 0; round < 10; round++) {
        const id = 9_007_199_254_740_993n + BigInt(round);
        const race = await raceCreate([server], server.token, id, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
        await assertCreatedOnce([server], server.token, id, race);
      }
    });

    it('answers 200 to every one of identical concurrent creations', async () => {
      const race = await raceCreate([server], server.token, -42n, Array(8).fill('Same'));
      await assertCreatedOnce([server], server.token, -42n, race);
    });
  });
}
