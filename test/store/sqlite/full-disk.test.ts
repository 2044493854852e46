// A full disk, made with a small tmpfs: the commands that only read (export, backup, token
// list, migrate on a current schema) work; the server starts, serves reads, answers writes 503, says
// why on /readyz and in a metric, and takes writes again once there is room. Needs root (mount);
// skipped otherwise, except with CI=true, where it fails.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../../support/cli.js';
import { fill } from '../../support/disk.js';
import { postPlant, send } from '../../support/http.js';
import { pollUntil } from '../../support/poll.js';
import { newToken, startServer, type ServerProcess } from '../../support/server.js';

const root = process.getuid?.() === 0;
const skip =
  !root && process.env.CI !== 'true' ? 'mounting a tmpfs needs root; with CI=true this test fails instead' : false;

describe('a full disk', { skip }, () => {
  const mount = mkdtempSync(join(tmpdir(), 'plant-store-full-'));
  const databaseUrl = `sqlite:${join(mount, 'store.db')}`;
  const filler = join(mount, 'filler');
  const env = { DATABASE_URL: databaseUrl };
  // Registered at the first start; the second start, on a full disk, finds it and writes nothing.
  const token = newToken();
  let server: ServerProcess | undefined;

  before(() => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mount]);
  });
  after(async () => {
    await server?.kill();
    execFileSync('umount', [mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  const reads = async (s: ServerProcess) =>
    send(s.url, { path: '/plants', headers: { authorization: `Bearer ${s.token}` } });

  it('a running server answers writes 503, says why, and takes them again once there is room', async () => {
    server = await startServer({ databaseUrl, token });
    assert.equal((await postPlant(server.url, server.token, '{"id":1,"name":"before"}')).status, 200);
    fill(filler);
    const refused = await postPlant(server.url, server.token, '{"id":2,"name":"full"}');
    assert.equal(refused.status, 503, refused.text);
    assert.match(refused.text, /disk is full/);
    const ready = await send(server.url, { path: '/readyz' });
    assert.equal(ready.status, 503);
    assert.match(ready.text, /disk is full/);
    const metrics = await send(server.url, { path: '/metrics', headers: { authorization: `Bearer ${server.token}` } });
    assert.match(metrics.text, /^plant_store_store_writable 0$/m);
    assert.equal((await reads(server)).status, 200);
    rmSync(filler);
    assert.ok(await pollUntil(async () => (await send(server!.url, { path: '/readyz' })).status === 200, 5000));
    assert.equal((await postPlant(server.url, server.token, '{"id":2,"name":"room again"}')).status, 200);
    assert.equal(await server.stop(), 0);
    server = undefined;
  });

  it('export, backup, token list and migrate work, and the server starts, when the disk is full', async () => {
    fill(filler);
    const exported = await cli(['export'], env);
    assert.equal(exported.status, 0, exported.stderr);
    assert.equal(exported.stdout, '{"id":1,"name":"before"}\n{"id":2,"name":"room again"}\n');
    const listed = await cli(['token', 'list', '--json'], env);
    assert.equal(listed.status, 0, listed.stderr);
    const migrated = await cli(['migrate'], env);
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.match(migrated.stdout, /up to date/);
    // The command opens the store for itself alone on a full disk; its snapshot must not lock it out.
    const backedUp = await cli(['backup'], env);
    assert.equal(backedUp.status, 0, backedUp.stderr);
    assert.match(backedUp.stderr, /^backup: 2 plants, 1 token, 0 webhook endpoints as of /);
    assert.match(backedUp.stdout, /^\{"type":"plant","id":1,"name":"before"\}$/m);
    assert.match(backedUp.stdout, /^\{"type":"plant","id":2,"name":"room again"\}$/m);
    assert.match(backedUp.stdout, /^\{"type":"end","plants":2,"tokens":1,"webhooks":0,/m);
    const imported = await cli(['import'], env, '{"id":3,"name":"x"}\n');
    assert.equal(imported.status, 1);
    assert.match(imported.stderr, /^plant-store: .*full/);
    assert.equal(imported.stderr.trim().split('\n').length, 1, 'one line');

    server = await startServer({ databaseUrl, token });
    assert.ok(server.stdout.some((l) => l.includes('the disk was full when the store was opened')));
    assert.equal((await send(server.url, { path: '/readyz' })).status, 503);
    assert.equal((await reads(server)).status, 200);
    assert.equal((await postPlant(server.url, server.token, '{"id":3,"name":"full"}')).status, 503);
    rmSync(filler);
    assert.ok(await pollUntil(async () => (await send(server!.url, { path: '/readyz' })).status === 200, 5000));
    assert.equal((await postPlant(server.url, server.token, '{"id":3,"name":"room again"}')).status, 200);
    assert.equal(await server.stop(), 0);
    server = undefined;
  });
});

// A file-size limit stands for what statfs does not show: a quota, a filesystem's limit on one
// file. The storage fails the commits while the disk looks roomy; readiness and the metric go by
// the last commit, and a commit that changes nothing tells when writes can be taken again.
/** Creates plants with this name until one is refused: that answer, and the id it had. */
async function writeUntilRefused(server: ServerProcess, name: string) {
  // 2 MB of WAL is a few thousand single-plant commits; bounded so the loop always ends.
  for (let id = 1; id <= 20_000; id++) {
    const r = await postPlant(server.url, server.token, `{"id":${id},"name":"${name}"}`);
    if (r.status !== 200) return { refused: r, id };
  }
  return { refused: undefined, id: 20_001 };
}

describe('a file-size limit', () => {
  let server: ServerProcess | undefined;
  after(() => server?.kill());

  it('writes 503, /readyz and the metric say so, and writes are taken again once it is lifted', async () => {
    const limit = 2 * 1024 * 1024;
    server = await startServer({ wrapper: ['prlimit', `--fsize=${limit}:`, '--'] });
    const name = 'x'.repeat(256);
    const { refused } = await writeUntilRefused(server, name);
    assert.ok(refused, 'a write was refused');
    assert.equal(refused.status, 503, refused.text);
    // Readiness copies the WAL into the database file before its commit, which would make room
    // here: the limit is lowered to that file's size, so no file can grow, as under a full quota.
    const file = server.databaseUrl.slice('sqlite:'.length);
    execFileSync('prlimit', ['--pid', String(server.proc.pid), `--fsize=${statSync(file).size}:`]);
    const ready = await send(server.url, { path: '/readyz' });
    assert.equal(ready.status, 503, ready.text);
    const metrics = await send(server.url, { path: '/metrics', headers: { authorization: `Bearer ${server.token}` } });
    assert.match(metrics.text, /^plant_store_store_writable 0$/m);
    assert.equal(
      (await send(server.url, { path: '/plants', headers: { authorization: `Bearer ${server.token}` } })).status,
      200,
    );

    execFileSync('prlimit', ['--pid', String(server.proc.pid), '--fsize=unlimited:']);
    assert.ok(await pollUntil(async () => (await send(server!.url, { path: '/readyz' })).status === 200, 5000));
    assert.equal((await postPlant(server.url, server.token, `{"id":20001,"name":"${name}"}`)).status, 200);
    assert.equal(await server.stop(), 0);
    server = undefined;
  });

  it('a WAL that reached the limit is copied into the database file, and writes are taken again', async () => {
    const limit = 2 * 1024 * 1024;
    server = await startServer({ wrapper: ['prlimit', `--fsize=${limit}:`, '--'] });
    const name = 'y'.repeat(256);
    const { refused, id } = await writeUntilRefused(server, name);
    assert.ok(refused, 'a write was refused');
    // The WAL is at the limit; the database file needs a page for each page the WAL holds, far
    // fewer than its frames, and has room for them. The refused commit's pages stay past the
    // last commit, and a commit of one page fits over them: readiness must not say yes on that
    // while writes still fail.
    const ready = await send(server.url, { path: '/readyz' });
    assert.equal(ready.status, 200, ready.text);
    for (let more = 0; more < 50; more++) {
      const r = await postPlant(server.url, server.token, `{"id":${id + more},"name":"${name}"}`);
      assert.equal(r.status, 200, `write ${more + 1} after /readyz said 200: ${r.text}`);
    }
    assert.equal(await server.stop(), 0);
    server = undefined;
  });
});
