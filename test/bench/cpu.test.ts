// The benchmark's CPU per request: what /proc says each process spent, and the bound it puts on
// a rate when the server, the load generator and the database share the machine's cores.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import pg from 'pg';
import { cpuPerRequest, cpuSample, statFields } from '../../scripts/bench/cpu.js';
import { cpuCeiling } from '../../scripts/bench/report.js';
import { behindPgBouncer, POSTGRES_URL, suiteOptions } from '../support/stores.js';

/** Whether `pid` is a PostgreSQL process of this machine (the benchmark's database is). */
function isLocalPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
  } catch {
    return false;
  }
}

/** Spends `ms` of this process's CPU (as Node itself counts it). */
function burn(ms: number): number {
  const start = process.cpuUsage();
  let used = 0;
  while (used < ms * 1000) {
    const d = process.cpuUsage(start);
    used = d.user + d.system;
  }
  return used;
}

/** One PostgreSQL's CPU in ticks, as the bench's sample counts a postmaster and its backends. */
function clusterTicks(postmaster: number): number {
  let ticks = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let f;
    try {
      f = statFields(readFileSync(`/proc/${d}/stat`, 'utf8'));
    } catch {
      continue; // ended between the listing and the read
    }
    if (Number(d) === postmaster) ticks += f.own + f.children;
    else if (f.ppid === postmaster) ticks += f.own;
  }
  return ticks;
}

describe("the benchmark's CPU per request", () => {
  it("reads a /proc stat line whose command holds spaces and ')'", () => {
    // Fields 14-17 are utime, stime, cutime, cstime; 4 is the parent's pid.
    const line = '4242 (post gres) x) S 17 4242 4242 0 -1 4194560 5 0 0 0 300 45 7 8 20 0 1 0 99 1 1';
    assert.deepEqual(statFields(line), { comm: 'post gres) x', ppid: 17, own: 345, children: 15 });
  });

  it('counts the CPU this process and a server spent, per request', () => {
    const before = cpuSample(process.pid);
    const used = burn(300);
    const cpu = cpuPerRequest(before, cpuSample(process.pid), 3);
    // /proc counts in ticks of 10 ms: within two ticks of Node's own count, split over 3 requests.
    for (const part of [cpu.loadGen, cpu.server]) assert.ok(Math.abs(part - used / 3) <= 20_000 / 3 + 1, `${part}`);
    assert.equal(cpu.database, undefined);
    assert.ok(cpu.idle >= 0 && cpu.idle < 1);
  });

  it('bounds a rate by the CPU all of its processes spend per request', () => {
    const cpu = [
      { server: 100, loadGen: 50, others: 5, idle: 0.1 },
      { server: 130, loadGen: 70, others: 5, idle: 0.1 },
      { server: 90, loadGen: 60, others: 5, idle: 0.1 },
    ];
    // 2 cores: 2e6 / 150 = 13,333 req/s, over the reference's 20,000 in that round.
    assert.equal(
      cpuCeiling(
        'POST',
        cpu.map((c) => ({ cpu: c })),
        [20_000, 10_000, 20_000],
        'the baseline',
        2,
      ),
      '\nPOST CPU per request: server 100 + load generator 60.0 us; at that, 2 cores kept busy would give at most 0.67x the baseline',
    );
    const withDatabase = cpu.map((c) => ({ ...c, database: 50 }));
    assert.match(
      cpuCeiling(
        'POST',
        withDatabase.map((c) => ({ cpu: c })),
        [10_000, 10_000, 10_000],
        'pgbench',
        2,
      ),
      /server 100 \+ load generator 60\.0 \+ database 50\.0 us; .* at most 1\.00x pgbench$/,
    );
    const pgbench = withDatabase.map((c) => ({ ...c, server: 0 }));
    assert.match(
      cpuCeiling(
        'pgbench',
        pgbench.map((c) => ({ cpu: c })),
        [10_000, 10_000, 10_000],
        'itself',
        2,
      ),
      /CPU per request: load generator 60\.0 \+/,
    );
  });

  // Behind PgBouncer, the server process outlives the client's connection.
  const direct = behindPgBouncer
    ? { skip: 'behind PgBouncer: the server connection stays open' }
    : suiteOptions('postgres');
  it("counts PostgreSQL's CPU, the connections that have ended included", direct, async (t) => {
    const before = cpuSample(undefined, true);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    if (!isLocalPostgres(backend)) {
      await client.end();
      return t.skip(`PostgreSQL at ${POSTGRES_URL} runs on another machine: /proc cannot see it`);
    }
    await client.query('SELECT count(*) FROM generate_series(1, 4000000)');
    // While its connection is open, the query's time is its backend's own.
    const open = cpuPerRequest(before, cpuSample(undefined, true), 1).database!;
    assert.ok(open >= 50_000, `${open} us while open`);
    // The sample counts every PostgreSQL of the machine; the clusters other tests make and stop
    // meanwhile take their time with them. So the ended backend is looked for in its own
    // postmaster's count, as the sample counts it: the live backends' own time, and the ended
    // ones' in the postmaster's children's.
    const postmaster = statFields(readFileSync(`/proc/${backend}/stat`, 'utf8')).ppid;
    const whileOpen = clusterTicks(postmaster);
    await client.end();
    // Once the postmaster has waited for the backend, its time is in the postmaster's children's:
    // it must still be counted (within a tick of 10 ms), not lost with the process.
    for (let i = 0; i < 100 && existsSync(`/proc/${backend}`); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(!existsSync(`/proc/${backend}`), 'the backend has ended');
    const afterEnd = clusterTicks(postmaster);
    assert.ok(afterEnd >= whileOpen - 1, `${afterEnd} ticks after the end, ${whileOpen} while open`);
  });
});
