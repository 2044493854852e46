// Read replicas (DATABASE_READ_URL) with real components: a primary and a streaming standby of
// this test's own, made from PostgreSQL 15's binaries, shared by two instances. The instances are
// apps built in this process (test/helper.ts): what is under test is where each reads, which the
// app decides from its settings and its store, not anything of the process around it. The
// standby's replay is paused to make it lag. Shown: a read that carries a write's
// Change-Position sees the write on the other instance; a plain read is never answered by a
// standby lagging past DATABASE_READ_MAX_LAG (and is answered by the standby before that); a
// stopped standby is left out, and taken back once it answers again.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { readJson } from '../../src/json/read-json.js';
import { Cluster } from '../support/clusters.js';
import { buildTestApp, type TestApp, type TestAppOptions } from '../helper.js';
import { postPlant, send, type RawResponse } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { newToken } from '../support/server.js';
import { openStore } from '../../src/store/open-store.js';

const PRIMARY_PORT = 6461;
const STANDBY_PORT = 6462;
const BIN = process.env.POSTGRES_BIN || '/usr/lib/postgresql/15/bin';
const missing = existsSync(`${BIN}/pg_basebackup`) ? undefined : `no PostgreSQL 15 binaries in ${BIN}`;
if (missing && process.env.CI === 'true') throw new Error(`${missing}; with CI=true that fails the run`);

const token = newToken();
const auth = { authorization: `Bearer ${token}` };

function get(server: TestApp, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return send(server, { path, headers: { ...auth, ...headers } });
}

/** Instances of one store, built at once, their log lines kept (`logs`). */
function startInstances(options: TestAppOptions[]): Promise<TestApp[]> {
  return Promise.all(options.map((o) => buildTestApp({ ...o, logs: true })));
}

/** A plant created through `server`, and the Change-Position its answer carried. */
async function create(server: TestApp, id: number, name: string): Promise<bigint> {
  const r = await postPlant(server, token, JSON.stringify({ id, name }));
  assert.equal(r.status, 200, r.text);
  return BigInt(String(r.headers['change-position']));
}

/** The server's read metrics: reads by role, and the standby's lag and usability. */
async function readMetrics(
  server: TestApp,
): Promise<{ primary: number; standby: number; usable: number; lag: number }> {
  const r = await get(server, '/metrics');
  assert.equal(r.status, 200, r.text);
  const families = new Map(parsePrometheusTextFormat(r.text).map((f) => [f.name, f]));
  const sample = (name: string, labels: Record<string, string>) => {
    const family = families.get(name);
    assert.ok(family, `no metric ${name}`);
    const m = family.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
    assert.ok(m, `no ${name} sample ${JSON.stringify(labels)}`);
    return Number(m.value);
  };
  const host = `127.0.0.1:${STANDBY_PORT}`;
  return {
    primary: sample('plant_store_store_reads_total', { role: 'primary', host: `127.0.0.1:${PRIMARY_PORT}` }),
    standby: sample('plant_store_store_reads_total', { role: 'standby', host }),
    usable: sample('plant_store_store_standby_usable', { host }),
    lag: sample('plant_store_store_standby_lag_seconds', { host }),
  };
}

describe('read replicas: two instances, one primary, one standby', { skip: missing }, () => {
  let primary: Cluster;
  let standby: Cluster;
  let databaseUrl: string;
  let servers: TestApp[] = [];
  let nextId = 1;

  /** Two instances on the primary and the standby (the read URL without schema= reads DATABASE_URL's). */
  async function instances(maxLag: string): Promise<[TestApp, TestApp]> {
    await Promise.all(servers.map((s) => s.close()));
    const env = {
      DATABASE_READ_URL: `postgres://postgres@127.0.0.1:${STANDBY_PORT}/postgres`,
      DATABASE_READ_MAX_LAG: maxLag,
    };
    servers = await startInstances([
      { databaseUrl, token, env },
      { databaseUrl, token, env },
    ]);
    return servers as [TestApp, TestApp];
  }

  /** The instance's log lines about its standby leaving or rejoining the reads. */
  const standbyLines = (server: TestApp) =>
    server.logs
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; standby?: string; why?: string })
      .filter((l) => l.standby !== undefined)
      .map(({ level, msg, standby: host, why }) => ({ level, msg, host, why }));

  /** Until the instance's standby is usable and has replayed `position`: plain reads see it there. */
  async function caughtUp(server: TestApp, position: bigint): Promise<void> {
    const seen = await pollUntil(async () => {
      const [row] = await standby.sql<{ p: string }>('SELECT max(seq)::text AS p FROM replicas.changes');
      return row?.p !== null && BigInt(row!.p) >= position && (await readMetrics(server)).usable === 1;
    }, 20_000);
    assert.ok(seen, 'the standby did not catch up');
  }

  before(async () => {
    primary = await Cluster.primary(PRIMARY_PORT);
    standby = await Cluster.standby(primary, STANDBY_PORT);
    databaseUrl = primary.url('replicas');
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await standby?.destroy();
    await primary?.destroy();
  });

  it("a read carrying a write's Change-Position sees it through the other instance; a plain read may not", async () => {
    // The standby stays usable however far it falls behind: only Change-Position keeps it out.
    const [a, b] = await instances('1h');
    const before = await create(a, nextId++, 'before the pause');
    await caughtUp(b, before);
    await standby.pauseReplay();
    try {
      for (let round = 0; round < 30; round++) {
        const id = nextId++;
        const name = `round ${round}`;
        const position = await create(a, id, name);
        const at = { 'change-position': String(position) };

        const plain = await get(b, `/plants/${id}`);
        assert.equal(plain.status, 404, 'a plain read is served by the paused standby: it has not got the plant');

        const one = await get(b, `/plants/${id}`, at);
        assert.equal(one.status, 200, `round ${round}: ${one.text}`);
        assert.equal((readJson(one.text) as { name: string }).name, name);

        const page = await get(b, `/plants?after=${id - 1}&limit=1`, at);
        assert.equal(page.status, 200, page.text);
        assert.equal(page.text, JSON.stringify([{ id, name }]));
        assert.ok(BigInt(String(page.headers['change-position'])) >= position, 'the page stands at or past the write');

        // From before the pause: the standby has the first change only, the primary all of them.
        const changes = await get(b, `/plants/changes?after=${before - 1n}&limit=1000`, at);
        assert.equal(changes.status, 200, changes.text);
        const positions = (readJson(changes.text) as { position: bigint | number }[]).map((c) => BigInt(c.position));
        assert.equal(positions[0], before);
        assert.equal(positions.at(-1), position, `round ${round}: the page ends at the write`);
        const stale = await get(b, `/plants/changes?after=${before - 1n}&limit=1000`);
        assert.deepEqual(
          (readJson(stale.text) as { position: bigint | number }[]).map((c) => BigInt(c.position)),
          [before],
          'without Change-Position the page is the standby’s, and says more follow',
        );
        assert.match(String(stale.headers.link), new RegExp(`after=${before}>`));
      }
      const metrics = await readMetrics(b);
      assert.ok(metrics.standby >= 60, `plain reads went to the standby: ${JSON.stringify(metrics)}`);
    } finally {
      await standby.resumeReplay();
    }
  });

  it('a plain read is never answered by a standby lagging past DATABASE_READ_MAX_LAG', async () => {
    const [a, b] = await instances('1s');
    await caughtUp(b, await create(a, nextId++, 'warm'));
    await standby.pauseReplay();
    try {
      const id = nextId++;
      await create(a, id, 'while paused');
      const written = Date.now();
      const reads: { at: number; status: number }[] = [];
      while (Date.now() - written < 2_500) {
        const at = Date.now();
        reads.push({ at: at - written, status: (await get(b, `/plants/${id}`)).status });
      }
      const stale = reads.filter((r) => r.status === 404);
      // The standby served plain reads while it lagged less than the bound...
      assert.ok(
        stale.length > 0 && stale[0]!.at < 500,
        `no read was served by the standby: ${JSON.stringify(reads.slice(0, 5))}`,
      );
      // ...and none once it lagged more: the primary has the plant.
      const late = stale.filter((r) => r.at >= 1_000);
      assert.deepEqual(late, [], 'reads answered by a standby lagging past 1 s');
      assert.ok(reads.filter((r) => r.at >= 1_000).length > 10);
      const metrics = await readMetrics(b);
      assert.equal(metrics.usable, 0);
      assert.ok(metrics.lag >= 1, `lag ${metrics.lag} s`);
      // The log says so once, with how far behind it was.
      const [left, ...more] = standbyLines(b);
      assert.deepEqual(more, [], JSON.stringify(more));
      assert.equal(left?.level, 40);
      assert.equal(left?.host, `127.0.0.1:${STANDBY_PORT}`);
      assert.match(left!.why!, /^[0-9]+\.[0-9] s behind, past DATABASE_READ_MAX_LAG \(1 s\)$/);
      assert.equal(left!.msg, `a standby is left out of the reads: ${left!.why}`);
    } finally {
      await standby.resumeReplay();
    }
    // Caught up, it serves reads again, and the log says that too.
    const { standby: served } = await readMetrics(b);
    await caughtUp(b, await create(a, nextId++, 'after the pause'));
    await get(b, '/plants?limit=1');
    assert.ok((await readMetrics(b)).standby > served);
    assert.ok(
      await pollUntil(async () => standbyLines(b).at(-1)?.msg === 'a standby serves reads again', 2_000),
      JSON.stringify(standbyLines(b)),
    );
  });

  it('a read URL that is no standby of the primary serves no read, and the log says why once', async () => {
    // Another store whose log is ahead of this one's and whose plant 1 is another plant, in
    // another database of the primary's server (not in recovery): a failover that lost writes
    // leaves such a database behind. Its lag looks like 0; its plants are not this store's.
    await primary.sql('CREATE DATABASE other');
    const otherUrl = `postgres://postgres@127.0.0.1:${PRIMARY_PORT}/other`;
    const { store } = await openStore({ databaseUrl: `${otherUrl}?schema=replicas`, databasePoolSize: 1 });
    try {
      for (let i = 1; i <= 40; i++)
        await store.plants.write({ kind: 'create', plant: { id: BigInt(i), name: 'theirs' } });
    } finally {
      await store.close();
    }
    try {
      await Promise.all(servers.map((s) => s.close()));
      servers = await startInstances([
        { databaseUrl, token, env: { DATABASE_READ_URL: otherUrl, DATABASE_READ_MAX_LAG: '1h' } },
      ]);
      const [server] = servers as [TestApp];
      const id = nextId++;
      await create(server, id, 'ours');
      // Time for several looks at it (every 100 ms): a usable standby would take reads by now.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      for (let i = 0; i < 4; i++) {
        const read = await get(server, `/plants/${id}`);
        assert.equal(read.status, 200, read.text);
        assert.equal((readJson(read.text) as { name: string }).name, 'ours');
        const page = await get(server, `/plants?after=${id - 1}&limit=1`);
        assert.equal(page.text, JSON.stringify([{ id, name: 'ours' }]));
      }
      const lines = standbyLines(server);
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.equal(lines[0]!.level, 40);
      assert.match(lines[0]!.why!, /^it is not a standby \(not in recovery\)/);
      const metrics = await get(server, '/metrics');
      const host = `127.0.0.1:${PRIMARY_PORT}`;
      assert.ok(metrics.text.includes(`plant_store_store_standby_usable{host="${host}"} 0`), metrics.text);
      assert.ok(metrics.text.includes(`plant_store_store_reads_total{host="${host}",role="standby"} 0`), metrics.text);
      // A database where the store is not at all: it answers, and is still no standby.
      await Promise.all(servers.map((s) => s.close()));
      await primary.sql('CREATE DATABASE bare');
      servers = await startInstances([
        {
          databaseUrl,
          token,
          env: {
            DATABASE_READ_URL: `postgres://postgres@127.0.0.1:${PRIMARY_PORT}/bare`,
            DATABASE_READ_MAX_LAG: '1h',
          },
        },
      ]);
      const [bare] = servers as [TestApp];
      assert.ok(await pollUntil(async () => standbyLines(bare).length > 0, 5_000), 'no line about the read URL');
      assert.match(standbyLines(bare)[0]!.why!, /^it holds no plant store/);
      assert.equal((await get(bare, `/plants/${id}`)).status, 200);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      servers = [];
      await primary.sql('DROP DATABASE other');
      await primary.sql('DROP DATABASE IF EXISTS bare');
    }
  });

  it('a standby that stops is left out: reads keep answering, and it is taken back once it answers', async () => {
    const [a, b] = await instances('5s');
    await caughtUp(b, await create(a, nextId++, 'before the stop'));
    const paths = ['/plants?limit=5', `/plants/${nextId - 1}`, '/plants/changes?limit=5'];
    const failures: string[] = [];
    const load = async (until: () => boolean) => {
      for (let i = 0; until(); i++) {
        for (const server of [a, b]) {
          const path = paths[i % paths.length]!;
          const r = await get(server, path);
          if (r.status !== 200) failures.push(`${path}: ${r.status} ${r.text}`);
        }
      }
    };
    // Readers enough that reads are in flight on the standby when it goes: those are made again
    // on the primary, the later ones go there from the start.
    let stopped = false;
    const reading = Promise.all(Array.from({ length: 6 }, () => load(() => !stopped)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await standby.stop('immediate');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    stopped = true;
    await reading;
    assert.deepEqual(failures, []);
    const down = await readMetrics(b);
    assert.equal(down.usable, 0);
    assert.ok(
      await pollUntil(async () => standbyLines(b).some((l) => l.level === 40 && l.why === 'unreachable'), 2_000),
      JSON.stringify(standbyLines(b)),
    );

    // Reads while it is down go to the primary.
    const onPrimary = down.primary;
    await load(
      (
        (n) => () =>
          n-- > 0
      )(9),
    );
    assert.ok((await readMetrics(b)).primary > onPrimary);
    assert.equal((await readMetrics(b)).standby, down.standby);

    await standby.start();
    await caughtUp(b, await create(a, nextId++, 'after the restart'));
    await get(b, '/plants?limit=1');
    assert.ok((await readMetrics(b)).standby > down.standby, 'the standby serves reads again');
  });
});
