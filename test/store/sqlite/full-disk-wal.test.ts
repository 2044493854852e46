// A full disk that the write-ahead log filled (the default SQLITE_CHECKPOINT_PAGES lets it grow
// to 40 MB before a commit copies it into the database file), with a load balancer asking
// /readyz every second as README tells operators to do: once room is freed, writes must go
// through again without a restart, whatever the probes ask meanwhile. Copying that log into the
// database file needs about as much room as the log holds; a readiness check that tried it used
// the freed room up itself. Needs root (mount); skipped otherwise, except with CI=true, where it
// fails.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fill } from '../../support/disk.js';
import { postPlant, send, type RawResponse } from '../../support/http.js';
import { startServer, type ServerProcess } from '../../support/server.js';

const root = process.getuid?.() === 0;
const skip =
  !root && process.env.CI !== 'true' ? 'mounting a tmpfs needs root; with CI=true this test fails instead' : false;

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a full disk with a large write-ahead log', { skip }, () => {
  const mount = mkdtempSync(join(tmpdir(), 'plant-store-full-wal-'));
  const file = join(mount, 'store.db');
  // Room held back while the log fills the disk, and freed later: the 4 MiB an operator frees.
  const reserve = join(mount, 'reserve');
  const filler = join(mount, 'filler');
  let server: ServerProcess | undefined;

  before(() => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mount]);
  });
  after(async () => {
    await server?.kill();
    execFileSync('umount', [mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  /** A batch of 1,000 new plants with long names: about a megabyte of new pages in the log. */
  const batch = (first: number) =>
    send(server!.url, {
      method: 'POST',
      path: '/plants/batch',
      headers: { authorization: `Bearer ${server!.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        operations: Array.from({ length: 1000 }, (_, i) => ({
          op: 'create',
          plant: { id: first + i, name: `plant ${first + i} ${'n'.repeat(240)}` },
        })),
      }),
    });

  it('writes go through within 10 s of 4 MiB freed, with /readyz asked every second', async () => {
    // The default SQLITE_CHECKPOINT_PAGES (10,000 pages, 40 MB) is more than this disk holds:
    // no commit copies the log into the database file, which stays as small as it started.
    server = await startServer({ databaseUrl: `sqlite:${file}`, env: { SQLITE_CHECKPOINT_PAGES: undefined } });
    fill(reserve, 4 * MiB);
    assert.equal(statSync(reserve).size, 4 * MiB);
    let id = 1;
    let refused = false;
    for (let n = 0; n < 40 && !refused; n++, id += 1000) refused = (await batch(id)).status === 503;
    assert.ok(refused, 'the log filled the disk');
    fill(filler);
    // A refused commit's pages stay in the log past its last commit, and smaller commits are
    // written over them: single writes go on until those are used up too.
    let full: RawResponse | undefined;
    for (let n = 0; n < 5000 && full?.status !== 503; n++, id++) {
      full = await postPlant(server.url, server.token, `{"id":${id},"name":"${'f'.repeat(200)}"}`);
    }
    assert.equal(full?.status, 503, full?.text);
    assert.match(full.text, /disk is full/);
    // The log holds more new pages than the room that will be freed: copying it into the
    // database file needs more than 4 MiB.
    assert.ok(statSync(`${file}-wal`).size > 8 * MiB, `the log is ${statSync(`${file}-wal`).size} bytes`);
    assert.equal((await send(server.url, { path: '/readyz' })).status, 503);

    rmSync(reserve);
    // The load balancer asks before any write arrives, and every second after.
    const probes: number[] = [(await send(server.url, { path: '/readyz' })).status];
    let written: number | undefined;
    for (let second = 0; second < 10 && written !== 200; second++) {
      await sleep(1000);
      probes.push((await send(server.url, { path: '/readyz' })).status);
      written = (await postPlant(server.url, server.token, `{"id":${id},"name":"room again"}`)).status;
    }
    assert.equal(written, 200, `writes after 4 MiB was freed; /readyz answered ${probes.join(', ')}`);
    assert.equal((await send(server.url, { path: '/readyz' })).status, 200);
    assert.equal(await server.stop(), 0);
    server = undefined;
  });
});
