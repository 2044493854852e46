// A full disk that the write-ahead log filled (the default SQLITE_CHECKPOINT_PAGES lets it grow
// to 40 MB before a commit copies it into the database file): once room is freed, writes must go
// through again without a restart, whatever asks meanwhile. Copying the log into the database
// file needs about as much room as the log holds; a copy that started without that room used the
// freed room up and never finished. Needs root (mount); skipped otherwise, except with CI=true,
// where it fails.
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

/** A tmpfs of this size for the describe it is called in, with the store's file on it. */
function tmpfs(size: string) {
  const mount = mkdtempSync(join(tmpdir(), 'plant-store-full-wal-'));
  const paths = {
    file: join(mount, 'store.db'),
    // Room held back while the log fills the disk, and freed later: the 4 MiB an operator frees.
    reserve: join(mount, 'reserve'),
    filler: join(mount, 'filler'),
  };
  before(() => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mount]);
  });
  after(() => {
    execFileSync('umount', [mount]);
    rmSync(mount, { recursive: true, force: true });
  });
  return paths;
}

/** A batch of 1,000 new plants with long names: about a megabyte of new pages in the log. */
const batch = (server: ServerProcess, first: number) =>
  send(server.url, {
    method: 'POST',
    path: '/plants/batch',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      operations: Array.from({ length: 1000 }, (_, i) => ({
        op: 'create',
        plant: { id: first + i, name: `plant ${first + i} ${'n'.repeat(240)}` },
      })),
    }),
  });

/**
 * Holds 4 MiB back, writes batches until the disk is full and single plants until they are
 * refused too; resolves to the next id. A refused commit's pages stay in the log past its last
 * commit, and smaller commits are written over them: single writes go on until those are used up.
 */
async function fillWithWrites(server: ServerProcess, paths: { reserve: string; filler: string }): Promise<number> {
  fill(paths.reserve, 4 * MiB);
  assert.equal(statSync(paths.reserve).size, 4 * MiB);
  let id = 1;
  let refused = false;
  for (let n = 0; n < 80 && !refused; n++, id += 1000) refused = (await batch(server, id)).status === 503;
  assert.ok(refused, 'the writes filled the disk');
  fill(paths.filler);
  let full: RawResponse | undefined;
  for (let n = 0; n < 5000 && full?.status !== 503; n++, id++) {
    full = await postPlant(server.url, server.token, `{"id":${id},"name":"${'f'.repeat(200)}"}`);
  }
  assert.equal(full?.status, 503, full?.text);
  assert.match(full.text, /disk is full/);
  return id;
}

describe('a full disk with a large write-ahead log', { skip }, () => {
  let server: ServerProcess | undefined;
  // Before the tmpfs's: the server's files are on it.
  after(() => server?.kill());
  const paths = tmpfs('24m');

  it('writes go through within 10 s of 4 MiB freed, with /readyz asked every second', async () => {
    // The default SQLITE_CHECKPOINT_PAGES (10,000 pages, 40 MB) is more than this disk holds:
    // no commit copies the log into the database file, which stays as small as it started.
    server = await startServer({ databaseUrl: `sqlite:${paths.file}`, env: { SQLITE_CHECKPOINT_PAGES: undefined } });
    const id = await fillWithWrites(server, paths);
    // The log holds more new pages than the room that will be freed: copying it into the
    // database file needs more than 4 MiB.
    const wal = statSync(`${paths.file}-wal`).size;
    assert.ok(wal > 8 * MiB, `the log is ${wal} bytes`);
    assert.equal((await send(server.url, { path: '/readyz' })).status, 503);

    rmSync(paths.reserve);
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

describe('a full disk where the log reached SQLITE_CHECKPOINT_PAGES', { skip }, () => {
  let server: ServerProcess | undefined;
  // Before the tmpfs's: the server's files are on it.
  after(() => server?.kill());
  const paths = tmpfs('64m');

  it("the commits' own checkpoints leave the room freed to writes", async () => {
    // The log reaches 10,000 pages (40 MB) with less room left than copying it into the database
    // file takes: the commit that reaches them starts a copy that cannot finish, which fills the
    // disk. Every commit after it starts that copy again.
    server = await startServer({ databaseUrl: `sqlite:${paths.file}`, env: { SQLITE_CHECKPOINT_PAGES: undefined } });
    let id = await fillWithWrites(server, paths);
    rmSync(paths.reserve);
    // Without a probe: 4 MiB holds a few thousand such writes in the log.
    const statuses: number[] = [];
    for (let n = 0; n < 20; n++, id++) {
      statuses.push((await postPlant(server.url, server.token, `{"id":${id},"name":"room again"}`)).status);
    }
    assert.deepEqual(statuses, Array<number>(20).fill(200));
    assert.equal((await send(server.url, { path: '/readyz' })).status, 200);
    assert.equal(await server.stop(), 0);
    server = undefined;
  });
});
