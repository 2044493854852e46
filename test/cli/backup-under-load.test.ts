// A backup taken while a server takes writes is one consistent snapshot: the store as it was at
// one moment, nothing acknowledged before the backup began missing, and it restores as such.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { plantRecord } from '../../src/domain/plant.js';
import { readJson } from '../../src/json/read-json.js';
import { backupLines, withStore } from '../support/backup-file.js';
import { cli } from '../support/cli.js';
import { postPlant, send } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { pollUntil } from '../support/poll.js';
import { CLI } from '../support/server.js';
import { createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

const SEED = 50_000;
const CHAINS = 6;

/**
 * One writer that waits for each acknowledgement before its next write, so its writes happen in
 * one order, and a consistent snapshot holds a prefix of them. Its step k creates a plant at the
 * high end of the ids (read last by a backup, which reads by id), renames a plant in the middle,
 * then creates one at the low end (read first): a backup that read its pages at different
 * moments would see a later step at the high end than at the low end.
 */
class Chain {
  /** When each write was sent and acknowledged, in order (3 a step). */
  readonly writes: { sent: number; acked?: number }[] = [];
  constructor(readonly c: number) {}
  high = (k: number) => 9_000_000_000_000_000_000n + BigInt(this.c * 1_000_000 + k);
  low = (k: number) => -this.high(k);
  /** A seeded plant, in the middle of the ids. */
  counter = () => BigInt(SEED / 2 + this.c * 1000);

  async run(url: string, token: string, stop: () => boolean): Promise<void> {
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    for (let k = 1; !stop(); k++) {
      for (const write of [
        () => postPlant(url, token, `{"id":${this.high(k)},"name":"high ${k}"}`),
        () =>
          send(url, { method: 'PUT', path: `/plants/${this.counter()}`, headers: auth, body: `{"name":"step ${k}"}` }),
        () => postPlant(url, token, `{"id":${this.low(k)},"name":"low ${k}"}`),
      ]) {
        const entry: { sent: number; acked?: number } = { sent: Date.now() };
        this.writes.push(entry);
        const res = await write();
        assert.equal(res.status, 200, res.text);
        entry.acked = Date.now();
      }
    }
  }

  /**
   * How many of this chain's writes the plants hold, checking that they are the first that many:
   * high plants 1..h, the counter at step s, low plants 1..l, with h >= s >= l >= h - 1.
   */
  prefixIn(plants: Map<bigint, string>): { writes: number; created: number } {
    const run = (id: (k: number) => bigint) => {
      let n = 0;
      while (plants.has(id(n + 1))) n++;
      return n;
    };
    const h = run(this.high);
    const l = run(this.low);
    assert.ok(!plants.has(this.high(h + 2)) && !plants.has(this.low(l + 2)), `chain ${this.c}: a hole in its plants`);
    const name = plants.get(this.counter())!;
    const s = name.startsWith('step ') ? Number(name.slice(5)) : 0;
    assert.ok(h >= s && s >= l && l >= h - 1, `chain ${this.c}: high ${h}, counter ${s}, low ${l} is no moment of it`);
    return { writes: h + s + l, created: h + l };
  }
}

function plantsOf(backup: string): Map<bigint, string> {
  const plants = new Map<bigint, string>();
  for (const line of backupLines(backup)) {
    const r = readJson(line) as { type: string; id: number | bigint; name: string };
    if (r.type === 'plant') plants.set(BigInt(r.id), r.name);
  }
  return plants;
}

/** `plant-store backup` in a process of its own, without blocking this one (whose writers go on). */
function backupAsync(databaseUrl: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [CLI, 'backup'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  proc.stdout.on('data', (c: Buffer) => out.push(c));
  proc.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve) =>
    proc.on('close', (status) =>
      resolve({ status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    ),
  );
}

for (const kind of stores) {
  describe(`a backup under write load [${kind}]`, suiteOptions(kind), () => {
    let db: TestStore;
    let restored: TestStore;
    // The server in-process (the backup is the other process here: what it reads is the subject).
    let server: TestApp;
    let url: string;
    before(async () => {
      db = createTestStore(kind);
      restored = createTestStore(kind);
      await withStore(db.databaseUrl, async (store) => {
        for (let from = 1; from <= SEED; from += 1000) {
          const batch = Array.from({ length: 1000 }, (_, i) =>
            plantRecord(BigInt(from + i), `seed ${from + i}`, undefined),
          );
          await store.plants.writeAll(batch.map((plant) => ({ kind: 'create' as const, plant })));
        }
      });
      assert.equal((await cli(['token', 'create', '--name', 'ci'], { DATABASE_URL: db.databaseUrl })).status, 0);
      server = await buildTestApp({ databaseUrl: db.databaseUrl });
      url = await server.listen();
    });
    after(async () => {
      await server?.close();
      await db?.drop();
      await restored?.drop();
    });

    it('holds the store as of one moment, with every write acknowledged before it began, and restores as such', async (t) => {
      const chains = Array.from({ length: CHAINS }, (_, c) => new Chain(c + 1));
      let stopped = false;
      const load = Promise.all(chains.map((ch) => ch.run(url, server.token, () => stopped)));
      const ackedAfter = (t: number) =>
        chains.every((ch) => ch.writes.some((w) => w.acked !== undefined && w.acked > t));
      try {
        // Every chain under way before the backup, and past it after: writes on both sides of its moment.
        assert.ok(await pollUntil(async () => ackedAfter(0), 10_000), 'the writers started');
        const began = Date.now();
        const backup = await backupAsync(db.databaseUrl);
        const ended = Date.now();
        assert.ok(await pollUntil(async () => ackedAfter(ended), 10_000), 'the writers went on after the backup');
        stopped = true;
        await load;

        assert.equal(backup.status, 0, backup.stderr);
        const plants = plantsOf(backup.stdout);
        for (let id = 1; id <= SEED; id++) assert.ok(plants.has(BigInt(id)), `seeded plant ${id} is missing`);
        let inBackup = 0;
        let created = 0;
        let duringBackup = 0;
        let total = 0;
        for (const ch of chains) {
          const { writes: n, created: c } = ch.prefixIn(plants);
          created += c;
          const ackedBefore = ch.writes.filter((w) => w.acked! < began).length;
          const sentBefore = ch.writes.filter((w) => w.sent <= ended).length;
          assert.ok(
            n >= ackedBefore,
            `chain ${ch.c}: ${ackedBefore} writes acknowledged before the backup began, ${n} in it`,
          );
          assert.ok(
            n <= sentBefore,
            `chain ${ch.c}: ${n} writes in the backup, only ${sentBefore} sent before it ended`,
          );
          inBackup += n;
          duringBackup += ch.writes.filter((w) => w.acked! >= began && w.acked! <= ended).length;
          total += ch.writes.length;
        }
        assert.equal(plants.size, SEED + created, 'no other plant');
        t.diagnostic(
          `${total} writes, ${duringBackup} acknowledged during the ${ended - began} ms of the backup, ${inBackup} in it`,
        );
        assert.ok(duringBackup > 0, 'writes were acknowledged while the backup ran');
        assert.ok(total > inBackup, "the store took writes after the backup's moment");

        // Restored, the store backs up to the same records: plants, tokens and subscribers of that moment.
        const r = await cli(['restore'], { DATABASE_URL: restored.databaseUrl }, backup.stdout);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`^restore: ${plants.size} plants, 2 tokens, 0 webhook endpoints`));
        const file = join(mkdtempSync(join(tmpdir(), 'plant-store-backup-')), 'again.backup');
        const again = await cli(['backup', '--output', file], { DATABASE_URL: restored.databaseUrl });
        assert.equal(again.status, 0, again.stderr);
        const text = readFileSync(file, 'utf8');
        rmSync(dirname(file), { recursive: true });
        assert.deepEqual(backupLines(text).slice(1, -1), backupLines(backup.stdout).slice(1, -1));
      } finally {
        stopped = true;
        await load.catch(() => undefined);
      }
    });
  });
}
