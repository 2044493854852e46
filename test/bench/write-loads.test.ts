// The write loads of `npm run bench` must keep finding their plants however fast the machine is:
// a DELETE or PUT of a plant that is gone is a 404, cheaper than a write, and would flatter the
// ratios. And a load that was answered with errors must say so in the summary.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import type { LoadResult } from '../../scripts/bench/load.js';
import type { Running } from '../../scripts/bench/processes.js';
import { seededId } from '../../scripts/bench/seed.js';
import {
  refusals,
  WARM_UP_SECONDS,
  warmUp,
  warmUpWriteSection,
  writeLoads,
  writeSpec,
} from '../../scripts/bench/writes.js';

const idOf = (path: string) => BigInt(path.slice('/plants/'.length));
const firstNew = 10n ** 15n;

describe("the bench's write loads", () => {
  it('delete each seeded plant once, then the posted ones, oldest first', () => {
    const loads = writeLoads(3);
    const posted = [0, 1, 2].map(() => (JSON.parse(loads.POST().body) as { id: number }).id);
    assert.deepEqual(posted, [1e15, 1e15 + 1, 1e15 + 2]);
    const deleted = [0, 1, 2, 3, 4].map(() => idOf(loads.DELETE().path));
    assert.deepEqual(deleted, [seededId(0), seededId(1), seededId(2), firstNew, firstNew + 1n]);
  });

  it('rename and read only plants not deleted yet, seeded ones while any is left', () => {
    const loads = writeLoads(4);
    for (let i = 0; i < 3; i++) loads.POST();
    loads.DELETE();
    loads.DELETE();
    const seededLeft = new Set([seededId(2), seededId(3)]);
    for (let i = 0; i < 200; i++) {
      assert.ok(seededLeft.has(idOf(loads.PUT().path)));
      assert.ok(seededLeft.has(idOf(loads.GET().path)));
    }
    for (let i = 0; i < 3; i++) loads.DELETE(); // the seeded ones and the first posted
    const postedLeft = new Set([firstNew + 1n, firstNew + 2n]);
    for (let i = 0; i < 200; i++) {
      assert.ok(postedLeft.has(idOf(loads.PUT().path)));
      assert.ok(postedLeft.has(idOf(loads.GET().path)));
    }
  });

  it('warn in the summary when a load had errors or answers other than 2xx', () => {
    const cpu = { server: 1, loadGen: 1, others: 0, idle: 0 };
    const clean: LoadResult = { rps: 1, p50: 1, p99: 1, errors: 0, non2xx: 0, peakRssMb: 1, cpu };
    assert.equal(refusals([clean, clean]), '');
    assert.match(refusals([clean, { ...clean, non2xx: 7 }, { ...clean, errors: 2 }]), /WARNING: 9 answers in 2 loads/);
  });

  describe('warm-up', () => {
    const servers: Server[] = [];
    after(() => servers.forEach((s) => s.close()));

    /** A server on 127.0.0.1 that answers 200 and records the method of each request, in order. */
    async function recorder(): Promise<{ target: Running; methods: string[]; posted: bigint[] }> {
      const methods: string[] = [];
      const posted: bigint[] = [];
      const server = createServer((req, res) => {
        if (methods.at(-1) !== req.method) methods.push(req.method!);
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          if (req.method === 'POST') posted.push(BigInt(/"id":(\d+)/.exec(body)![1]!));
          res.end('{}');
        });
      });
      servers.push(server);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const target = {
        url,
        proc: { pid: process.pid },
        rssMb: () => 0,
        resetLoopDelay() {},
        loopDelay: async () => undefined,
      };
      return { target: target as unknown as Running, methods, posted };
    }

    /** A bench of one-second loads of 2 connections. */
    const bench = {
      dir: '',
      token: 't',
      rounds: 1,
      seconds: 1,
      connections: 2,
      headers: { authorization: 'Bearer t' },
    };

    /**
     * A load's spec, paced at 200 requests a second: what is checked is which requests went where,
     * not how many a second the machine can send (which took a core for the file's 14 s).
     */
    const paced =
      (spec: ReturnType<typeof writeSpec>): ReturnType<typeof writeSpec> =>
      (...args) => ({ ...spec(...args), rate: 200 });

    /** `work` with the warm-ups cut short (autocannon runs a load for a second at least). */
    async function withShortWarmUps(work: () => Promise<void>): Promise<void> {
      const saved = { ...WARM_UP_SECONDS };
      Object.assign(WARM_UP_SECONDS, { POST: 0.3, PUT: 0.3, DELETE: 0.3, GET: 0.3 });
      try {
        await work();
      } finally {
        Object.assign(WARM_UP_SECONDS, saved);
      }
    }

    it('runs each load in turn on each server before the rounds', () =>
      withShortWarmUps(async () => {
        const [a, b] = [await recorder(), await recorder()];
        const spec = paced(writeSpec(bench, writeLoads(10)));
        await warmUp(
          [
            [a.target, spec],
            [b.target, spec],
          ],
          ['POST', 'PUT', 'DELETE'],
        );
        assert.deepEqual(a.methods, ['POST', 'PUT', 'DELETE']);
        assert.deepEqual(b.methods, ['POST', 'PUT', 'DELETE']);
      }));

    it("gives the baseline's POSTs ids of their own, so the service's loads only ask for plants it made", () =>
      withShortWarmUps(async () => {
        const [service, bare, baseline] = [await recorder(), await recorder(), await recorder()];
        const loads = writeLoads(10);
        await warmUpWriteSection(
          { service: service.target, bare: bare.target, baseline: baseline.target },
          paced(writeSpec(bench, loads)),
          paced(writeSpec(bench, writeLoads(10))),
          paced(writeSpec(bench, writeLoads(10))),
        );
        assert.ok(service.posted.length > 0 && baseline.posted.length > 0);
        assert.equal(baseline.posted[0], firstNew);
        // The service's next POST follows the ones it was sent: none of its ids went elsewhere.
        const next = BigInt((JSON.parse(loads.POST().body) as { id: number }).id);
        assert.equal(next, firstNew + BigInt(service.posted.length));
      }));
  });
});
