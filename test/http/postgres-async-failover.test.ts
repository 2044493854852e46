// Asynchronous failover with real clusters: writes the old primary acknowledged and the standby
// never received are lost when the standby is promoted, and the new primary gives their positions
// to changes of its own. Two served instances, both naming both hosts, had those lost changes in
// memory (a stream was open on each); once the new primary is found, each must serve the new
// primary's log, never the lost changes: a follower that lists, then follows from the list's
// Change-Position, ends with exactly the store's plants on every instance, and a stream that had
// seen lost changes is closed and, resuming past the new log's end, told to list again (410).
// The instances are apps built in this process (test/helper.ts), listening on ports of their own:
// what is under test is each app's hub and store, not its process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readJson } from '../../src/json/read-json.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { cli } from '../support/cli.js';
import { Cluster } from '../support/clusters.js';
import { openEventStream } from '../support/event-stream.js';
import { send } from '../support/http.js';
import { pollUntil } from '../support/poll.js';

// Ports of this test's own (postgres-failover.test.ts has 6451-6453, read-replicas 6461-6462).
const PRIMARY_PORT = 6471;
const STANDBY_PORT = 6472;
const SCHEMA = 'async_failover';
const WITHIN_MS = 20_000;

const databaseUrl = `postgres://postgres@127.0.0.1:${PRIMARY_PORT},127.0.0.1:${STANDBY_PORT}/postgres?schema=${SCHEMA}`;

interface ChangeJson {
  position: bigint;
  type: 'created' | 'updated' | 'deleted';
  id: bigint;
  plant?: { id: bigint; name: string };
}

/** A stream of the changes as EventSource opens it; `ids` are its events' positions so far. */
const openStream = (base: string, token: string, headers: Record<string, string> = {}) =>
  openEventStream(base, token, '/plants/changes', headers);

/** A follower of one instance: lists every plant, then follows the log from the first page's Change-Position. */
class Follower {
  readonly plants = new Map<bigint, string>();
  readonly changes: ChangeJson[] = [];
  after = 0n;

  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  private get(path: string) {
    return send(this.base, { path, headers: { authorization: `Bearer ${this.token}` } });
  }

  async list(): Promise<void> {
    let next: string | undefined = '/plants?limit=3';
    for (let page = 0; next !== undefined; page++) {
      assert.ok(page < 100, 'a bounded number of pages');
      const res = await this.get(next);
      assert.equal(res.status, 200, res.text);
      if (page === 0) this.after = BigInt(String(res.headers['change-position']));
      for (const p of readJson(res.text) as { id: bigint; name: string }[]) this.plants.set(BigInt(p.id), p.name);
      next = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1];
    }
  }

  /** Pages of changes, as a client follows them (Link, else the last change's position), until `until`. */
  async follow(until: bigint): Promise<void> {
    for (let page = 0; this.after < until; page++) {
      assert.ok(page < 100, `a bounded number of pages (at ${this.after}, following to ${until})`);
      await this.page();
    }
  }

  /** One page of changes after `after` (a long poll of up to a second), applied. */
  async page(): Promise<void> {
    const res = await this.get(`/plants/changes?after=${this.after}&limit=2&wait=1`);
    assert.equal(res.status, 200, res.text);
    const list = readJson(res.text) as ChangeJson[];
    for (const c of list) {
      this.changes.push(c);
      if (c.type === 'deleted') this.plants.delete(BigInt(c.id));
      else this.plants.set(BigInt(c.id), c.plant!.name);
    }
    const link = /after=(\d+)/.exec(String(res.headers.link ?? ''))?.[1];
    if (link !== undefined) this.after = BigInt(link);
    else if (list.length > 0) this.after = BigInt(list.at(-1)!.position);
  }
}

/** An instance: the app, listening, with the base URL it listens on. */
interface Instance {
  app: TestApp;
  url: string;
  token: string;
}

describe('PostgreSQL asynchronous failover: changes the promotion lost are never served', () => {
  let primary: Cluster;
  let standby: Cluster;
  const servers: Instance[] = [];

  before(async () => {
    primary = await Cluster.primary(PRIMARY_PORT);
    standby = await Cluster.standby(primary, STANDBY_PORT);
    const migrated = await cli(['migrate'], { DATABASE_URL: databaseUrl });
    assert.equal(migrated.status, 0, migrated.stderr);
    for (let i = 0; i < 2; i++) {
      const app = await buildTestApp({ databaseUrl });
      servers.push({ app, url: await app.listen(), token: app.token });
    }
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.app.close()));
    await Promise.all([primary?.destroy(), standby?.destroy()]);
  });

  it('every instance serves the new primary log: a stream that saw lost changes gets 410, a new follower exactly the store', async () => {
    const [a, b] = servers as [Instance, Instance];
    const write = async (s: Instance, method: string, path: string, body?: unknown) => {
      const res = await send(s.url, {
        method,
        path,
        headers: {
          authorization: `Bearer ${s.token}`,
          'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      assert.equal(res.status, method === 'DELETE' ? 204 : 200, `${method} ${path}: ${res.text}`);
      return BigInt(String(res.headers['change-position']));
    };

    // Both hosts have these: the standby has replayed them before it stops.
    for (const id of [1, 2, 3]) await write(a, 'POST', '/plants', { id, name: `kept ${id}` });
    const [{ lsn }] = (await primary.sql<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')) as [
      { lsn: string },
    ];
    const replayed = async () =>
      (await standby.sql(`SELECT 1 WHERE pg_last_wal_replay_lsn() >= $1::pg_lsn`, [lsn])).length === 1;
    assert.ok(await pollUntil(replayed, WITHIN_MS, 50), 'the standby has the first writes');

    // A stream on each instance: their hubs hold the latest changes in memory.
    const streams = [await openStream(a.url, a.token), await openStream(b.url, b.token)];
    await standby.stop('fast');
    // Acknowledged by the primary, never received by the standby: the failover loses them.
    const lost = [
      await write(a, 'POST', '/plants', { id: 100, name: 'lost 100' }),
      await write(b, 'POST', '/plants', { id: 101, name: 'lost 101' }),
      await write(a, 'PATCH', '/plants/1', { name: 'lost rename' }),
      await write(a, 'DELETE', '/plants/2'),
      await write(b, 'POST', '/plants', { id: 102, name: 'lost 102' }),
    ];
    const lastLost = lost.at(-1)!;
    for (const s of streams) {
      assert.ok(
        await pollUntil(async () => s.ids().at(-1) === lastLost, WITHIN_MS, 50),
        'each stream saw the lost changes',
      );
    }

    await primary.stop('immediate');
    await standby.start();
    await standby.promote();
    for (const s of servers) {
      const found = async () =>
        (await send(s.url, { path: '/readyz' })).text.includes(`"primary":"127.0.0.1:${STANDBY_PORT}"`);
      assert.ok(await pollUntil(found, WITHIN_MS, 100), 'each instance writes to the promoted standby');
    }

    // The streams that saw the lost changes end; resuming from the last of them, past the new
    // log's end, is told to list again.
    for (const s of streams) {
      const ended = await Promise.race([
        s.closed.then(() => true),
        new Promise((r) => setTimeout(r, WITHIN_MS, false)),
      ]);
      assert.ok(ended, 'a stream that saw lost changes is closed');
    }
    for (const s of servers) {
      const resumed = await send(s.url, {
        path: '/plants/changes',
        headers: { authorization: `Bearer ${s.token}`, accept: 'text/event-stream', 'last-event-id': String(lastLost) },
      });
      assert.equal(resumed.status, 410, resumed.text);
    }

    // New followers list now, then the new primary writes at the positions the lost changes had, and past them.
    const followers = [new Follower(a.url, a.token), new Follower(b.url, b.token)];
    for (const f of followers) await f.list();
    const listedAt = followers[0]!.after;
    assert.ok(listedAt < lost[0]!, `the new primary's log ends before the lost changes (${listedAt})`);
    for (const f of followers) assert.equal(f.after, listedAt);
    // Each follower reads a page before the new writes as well: the instance's view of the log's end then.
    for (const f of followers) await f.page();
    const written: bigint[] = [];
    for (let i = 0; i < 4; i++) {
      written.push(await write(a, 'POST', '/plants', { id: 200 + i, name: `new ${200 + i}` }));
      written.push(await write(b, 'POST', '/plants', { id: 300 + i, name: `new ${300 + i}` }));
    }
    written.push(await write(b, 'PATCH', '/plants/3', { name: 'new rename' }));
    const end = written.at(-1)!;
    assert.ok(end > lastLost, 'the new primary reuses the lost positions, and goes past them');

    const plants = new Map(
      (await standby.sql<{ id: string; name: string }>(`SELECT id::text, name FROM ${SCHEMA}.plants`)).map((r) => [
        BigInt(r.id),
        r.name,
      ]),
    );
    const events = (
      await standby.sql<{ seq: string; plant_id: string }>(
        `SELECT seq::text, plant_id::text FROM ${SCHEMA}.changes WHERE seq > $1 ORDER BY seq`,
        [String(listedAt)],
      )
    ).map((r) => `${r.seq}:${r.plant_id}`);
    for (const [i, f] of followers.entries()) {
      await f.follow(end);
      assert.deepEqual(
        f.changes.map((c) => `${c.position}:${c.id}`),
        events,
        `instance ${i}: the new primary's changes`,
      );
      assert.deepEqual(new Map([...f.plants].sort()), new Map([...plants].sort()), `instance ${i}: the store's plants`);
    }
  });
});
