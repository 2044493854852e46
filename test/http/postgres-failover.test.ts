// Failover with real clusters: a primary and a streaming standby made from PostgreSQL 15's
// binaries, synchronous replication, a served instance whose DATABASE_URL names both. The primary
// is stopped as a crash would stop it and the standby promoted, while clients write. The instance
// is the app built in this process (test/helper.ts): what fails over is its store, not its process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helper.js';
import { cli } from '../support/cli.js';
import { Cluster } from '../support/clusters.js';
import { postPlant, send, type RawResponse } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { FAST_WEBHOOKS, Receiver } from '../support/receiver.js';

const PRIMARY_PORT = 6451;
const STANDBY_PORT = 6452;
/** No server listens there. */
const UNUSED_PORT = 6453;
const SCHEMA = 'failover';
/** What a request may take: its budget (4 s) and a connection's time-out, with room for a busy machine. */
const ANSWER_WITHIN_MS = 6_000;
const RESUME_WITHIN_MS = 10_000;

interface Outcome {
  kind: 'single' | 'batch';
  ids: bigint[];
  sent: number;
  answered: number;
  res: RawResponse;
}

const hostUrl = (hosts: number[]) =>
  `postgres://postgres@${hosts.map((p) => `127.0.0.1:${p}`).join(',')}/postgres?schema=${SCHEMA}`;

describe('PostgreSQL failover: DATABASE_URL names a primary and its synchronous standby', () => {
  let primary: Cluster;
  let standby: Cluster;
  let server: TestApp;
  let hook: Receiver;
  const ready = async (s: TestApp) => send(s, { path: '/readyz' });

  before(async () => {
    primary = await Cluster.primary(PRIMARY_PORT);
    standby = await Cluster.standby(primary, STANDBY_PORT);
    // Synchronous once the standby streams: a commit returns when the standby has it on disk.
    primary.configure({ synchronous_standby_names: "'*'", synchronous_commit: 'on' });
    await primary.reload();
    const sync = async () =>
      (await primary.sql(`SELECT 1 FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'`))
        .length === 1;
    assert.ok(await pollUntil(sync, 30_000, 100), 'the standby streams synchronously');
    const databaseUrl = hostUrl([PRIMARY_PORT, STANDBY_PORT]);
    const migrated = await cli(['migrate'], { DATABASE_URL: databaseUrl });
    assert.equal(migrated.status, 0, migrated.stderr);
    hook = await new Receiver().start();
    const added = await cli(['webhook', 'add', hook.url, '--events', 'created'], {
      DATABASE_URL: databaseUrl,
      ...FAST_WEBHOOKS,
    });
    assert.equal(added.status, 0, added.stderr);
    server = await buildTestApp({ databaseUrl, env: FAST_WEBHOOKS, logs: true });
  });
  after(async () => {
    await server?.close();
    await hook?.close();
    await Promise.all([primary?.destroy(), standby?.destroy()]);
  });

  it('writes to the host that answers as the primary, wherever the URL lists it, and /readyz names it', async () => {
    const res = await ready(server);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { status: 'ok', primary: `127.0.0.1:${PRIMARY_PORT}` });
    // The standby first: an instance that took the first host would write to a standby.
    const reversed = await buildTestApp({ databaseUrl: hostUrl([STANDBY_PORT, PRIMARY_PORT]) });
    try {
      assert.deepEqual((await ready(reversed)).json, { status: 'ok', primary: `127.0.0.1:${PRIMARY_PORT}` });
      const mine = await postPlant(reversed, reversed.token, '{"id":1,"name":"first"}');
      assert.equal(mine.status, 200, mine.text);
      assert.deepEqual(await primary.sql(`SELECT name FROM ${SCHEMA}.plants WHERE id = 1`), [{ name: 'first' }]);
    } finally {
      await reversed.close();
    }
  });

  it('stops a command, saying what each host answered, when none answers as the primary', async () => {
    const started = Date.now();
    const refused = await cli(['migrate'], { DATABASE_URL: hostUrl([STANDBY_PORT, UNUSED_PORT]) });
    assert.equal(refused.status, 1);
    assert.match(
      refused.stderr,
      new RegExp(
        `^plant-store: the store is unavailable: no host answers as the primary \\(127.0.0.1:${STANDBY_PORT}: a standby; ` +
          `127.0.0.1:${UNUSED_PORT}: connect ECONNREFUSED 127.0.0.1:${UNUSED_PORT}\\)\n$`,
      ),
    );
    assert.ok(Date.now() - started < 5_000, 'within the wait for a connection and a probe');
  });

  it('after an immediate stop of the primary and a promotion: 503 with Retry-After meanwhile, never a hang, writes again within 10 s, every 2xx on the new primary', async (t) => {
    const outcomes: Outcome[] = [];
    let nextId = 1_000n;
    let writing = true;
    const auth = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
    const write = async (kind: Outcome['kind']) => {
      const ids = kind === 'single' ? [nextId++] : [nextId++, nextId++, nextId++, nextId++, nextId++];
      const operations = ids.map((id) => ({ op: 'create', plant: { id: Number(id), name: `p${id}` } }));
      const sent = Date.now();
      const res =
        kind === 'single'
          ? await send(server, {
              method: 'POST',
              path: '/plants',
              headers: auth,
              body: `{"id":${ids[0]},"name":"p${ids[0]}"}`,
            })
          : await send(server, {
              method: 'POST',
              path: '/plants/batch',
              headers: auth,
              body: JSON.stringify({ operations }),
            });
      outcomes.push({ kind, ids, sent, answered: Date.now(), res });
      // A client that was told to come back later does, a little later (not at once, in a loop).
      // Otherwise it writes every 20 ms: in-process, a client writing flat out made hundreds of
      // writes a second, whose webhook deliveries the next test then waited behind.
      await new Promise((r) => setTimeout(r, res.status === 503 ? 100 : 20));
    };
    const client = async (kind: Outcome['kind']) => {
      while (writing) await write(kind);
    };
    const clients = [client('single'), client('single'), client('single'), client('batch')];

    await new Promise((r) => setTimeout(r, 1_000));
    await primary.stop('immediate');
    const stopped = Date.now();
    // The gap an operator's tooling leaves between the crash and the promotion.
    await new Promise((r) => setTimeout(r, 1_000));
    // Counted from the moment it is asked for: a search may find the new primary before pg_ctl says so.
    const promoted = Date.now();
    await standby.promote();
    const resumed = () => outcomes.some((o) => o.sent >= promoted && o.res.status === 200);
    await pollUntil(async () => resumed(), RESUME_WITHIN_MS + ANSWER_WITHIN_MS, 50);
    await new Promise((r) => setTimeout(r, 2_000));
    writing = false;
    await Promise.all(clients);

    t.diagnostic(`${outcomes.length} writes`);
    for (const o of outcomes) {
      const took = o.answered - o.sent;
      assert.ok(took <= ANSWER_WITHIN_MS, `a ${o.kind} write answered in ${took} ms (${o.res.status})`);
      assert.ok([200, 503].includes(o.res.status), `${o.kind} write: ${o.res.status} ${o.res.text}`);
      if (o.res.status === 503) assert.match(String(o.res.headers['retry-after']), /^[1-9][0-9]*$/);
    }
    assert.ok(
      outcomes.some((o) => o.sent < stopped && o.res.status === 200),
      'writes went through before',
    );
    const gap = outcomes.filter((o) => o.sent >= stopped && o.sent < promoted);
    assert.ok(
      gap.length > 0 && gap.every((o) => o.res.status === 503),
      'writes were refused while no host was the primary',
    );
    const first = outcomes
      .filter((o) => o.sent >= promoted && o.res.status === 200)
      .sort((a, b) => a.answered - b.answered)[0];
    assert.ok(first, 'writes went through after the promotion');
    assert.ok(
      first.answered - promoted <= RESUME_WITHIN_MS,
      `writes resumed ${first.answered - promoted} ms after the promotion`,
    );
    const late = outcomes.filter((o) => o.sent >= first.answered + 1_000);
    assert.ok(late.length > 0 && late.every((o) => o.res.status === 200), 'and every write after that went through');
    for (const kind of ['single', 'batch'] as const) {
      assert.ok(
        late.some((o) => o.kind === kind),
        `${kind} writes went through after the promotion`,
      );
    }

    const acked = outcomes.filter((o) => o.res.status === 200).flatMap((o) => o.ids);
    const rows = await standby.sql<{ id: string; name: string }>(`SELECT id::text, name FROM ${SCHEMA}.plants`);
    const stored = new Map(rows.map((r) => [BigInt(r.id), r.name]));
    const missing = acked.filter((id) => stored.get(id) !== `p${id}`);
    assert.deepEqual(missing, [], `of ${acked.length} acknowledged writes, these are not on the new primary`);

    const res = await ready(server);
    assert.deepEqual(res.json, { status: 'ok', primary: `127.0.0.1:${STANDBY_PORT}` });
    const logged = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => 'primary' in l);
    assert.deepEqual(
      logged.map(({ level, primary, previous }) => ({ level, primary, previous })),
      [{ level: 40, primary: `127.0.0.1:${STANDBY_PORT}`, previous: `127.0.0.1:${PRIMARY_PORT}` }],
      'the change is logged once, as a warning',
    );
    const metrics = await send(server, { path: '/metrics', headers: { authorization: auth.authorization } });
    assert.match(
      metrics.text,
      new RegExp(`^plant_store_database_primary\\{host="127.0.0.1:${STANDBY_PORT}"\\} 1$`, 'm'),
    );
    assert.doesNotMatch(metrics.text, new RegExp(`host="127.0.0.1:${PRIMARY_PORT}"`));
  });

  it('follows the new primary with the change feed and the webhook deliveries', async () => {
    const auth = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
    const before = await postPlant(server, server.token, '{"id":90001,"name":"before the wait"}');
    assert.equal(before.status, 200, before.text);
    const position = String(before.headers['change-position']);
    const waited = send(server, { path: `/plants/changes?after=${position}&wait=10`, headers: auth });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await postPlant(server, server.token, '{"id":90002,"name":"after"}')).status, 200);
    const changes = (await waited).json as { id: number; type: string }[];
    assert.deepEqual(
      changes.map((c) => [c.type, c.id]),
      [['created', 90002]],
    );
    const delivered = async () => hook.requests.some((r) => JSON.parse(r.body).id === 90002);
    const pending = async () =>
      (
        await standby.sql<{ n: string }>(
          `SELECT count(*) AS n FROM ${SCHEMA}.deliveries WHERE state = 'pending' AND event_seq < $1`,
          [position],
        )
      )[0]!.n;
    const ahead = await pending();
    const sentBefore = hook.requests.length;
    const took = Date.now();
    assert.ok(
      await pollUntil(delivered, 10_000, 50),
      `the webhook of a write on the new primary is delivered (${ahead} deliveries were pending ahead of it; ` +
        `${hook.requests.length - sentBefore} sent in ${Date.now() - took} ms, ${await pending()} still pending)`,
    );
  });
});
