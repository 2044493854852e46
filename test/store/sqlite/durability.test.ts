// Power-loss durability, shown from the order of system calls: a SIGKILL cannot show it (the
// page cache outlives the process), so the built server runs under strace, and for every write
// the test finds, in order: the WAL page that holds it written (pwrite64 on the -wal file), an
// fdatasync of the -wal file that started after that write and returned, and only then the 2xx
// that answers it. For a lone write, and for 50 concurrent ones sharing commits. Then the same
// for checkpoints: the WAL synced before its pages are copied into the database file, and that
// file synced before the WAL is written from its start again. And a failed sync never answered.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { postPlant, send } from '../../support/http.js';
import { startServer, type ServerProcess } from '../../support/server.js';

const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p));
const skip =
  !STRACE && process.env.CI !== 'true'
    ? 'strace is not installed (apt-get install -y strace); with CI=true this test fails instead'
    : false;

interface Call {
  line: number;
  pid: string;
  name: string;
  fd: number;
  /** The call's text as strace printed it (buffer contents included). */
  text: string;
  /** Line of its result: the same line, or the "resumed" line of an unfinished call. */
  done: number;
  result: string;
}

/** The calls of a `strace -f` log, each with the line it started on and the line it returned on. */
function parse(log: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<string, Call>();
  log.split('\n').forEach((raw, line) => {
    const m = /^(\d+)\s+(.*)$/.exec(raw);
    if (!m) return;
    const [, pid, rest] = m as unknown as [string, string, string];
    const resumed = /^<\.\.\. (\w+) resumed>.*= (-?\w+)/.exec(rest);
    if (resumed) {
      const call = open.get(`${pid}:${resumed[1]}`);
      if (call) {
        call.done = line;
        call.result = resumed[2]!;
        open.delete(`${pid}:${resumed[1]}`);
      }
      return;
    }
    const start = /^(\w+)\((\d+)?/.exec(rest);
    if (!start) return;
    const call: Call = { line, pid, name: start[1]!, fd: Number(start[2] ?? -1), text: rest, done: line, result: '' };
    if (rest.endsWith('<unfinished ...>')) open.set(`${pid}:${call.name}`, call);
    // The result follows the call's closing parenthesis ("= 0", or "= 0 (DELAYED)" when injected).
    else call.result = [...rest.matchAll(/\)\s+= (-?\w+)/g)].at(-1)?.[1] ?? '';
    calls.push(call);
  });
  return calls;
}

/** The server under strace: the first process of its log (strace itself only detaches on a signal). */
function tracee(traceFile: string): number {
  return Number(/^(\d+) /.exec(readFileSync(traceFile, 'utf8'))![1]);
}

/** Kills the server, then strace with it; a server left behind would hold the test's pipes open. */
async function stopTraced(server: ServerProcess | undefined, traceFile: string): Promise<void> {
  try {
    process.kill(tracee(traceFile), 'SIGKILL');
  } catch {
    // already gone
  }
  await server?.dispose();
}

/**
 * The built server under `strace -f -qq <options> -o <trace>`, for the suite this is called in,
 * on a store in a temporary folder of its own; stopped and removed after the suite.
 */
function tracedServer(
  name: string,
  options: (dir: string) => string[],
  env?: Record<string, string>,
): { traceFile: string; server: () => ServerProcess } {
  const dir = mkdtempSync(join(tmpdir(), `plant-store-${name}-`));
  const traceFile = join(dir, 'trace.log');
  let server: ServerProcess | undefined;
  before(async () => {
    server = await startServer({
      dataDir: dir,
      env,
      wrapper: [STRACE!, '-f', '-qq', ...options(dir), '-o', traceFile],
    });
  });
  after(async () => {
    await stopTraced(server, traceFile);
    rmSync(dir, { recursive: true, force: true });
  });
  return { traceFile, server: () => server! };
}

describe('durability: the fsync comes before the 2xx', { skip }, () => {
  // Every sync made 5 ms slower, as on a slow disk: the concurrent writes arrive while one runs
  // and wait for the next, so whether they share it does not hang on how busy the machine is
  // (with instant syncs, a client slowed down by other work sent them one sync apart).
  const { traceFile, server: traced } = tracedServer('strace', () => [
    '-s',
    '65536',
    '-e',
    'trace=openat,pwrite64,fdatasync,fsync,write,writev',
    '-e',
    'inject=fdatasync:delay_exit=5000',
  ]);

  it('writes the WAL, syncs it, then answers: a lone write and 50 concurrent ones', async () => {
    const server = traced();
    // Names of one length, none the start of another, so a page holding one names it alone.
    const names = ['durable-lone'];
    assert.equal((await postPlant(server.url, server.token, '{"id":1,"name":"durable-lone"}')).status, 200);
    const concurrent = Array.from({ length: 50 }, (_, i) => `durable-${String(i).padStart(4, '0')}`);
    names.push(...concurrent);
    const answers = await Promise.all(
      concurrent.map((name, i) => postPlant(server.url, server.token, `{"id":${100 + i},"name":"${name}"}`)),
    );
    assert.ok(answers.every((a) => a.status === 200));
    // SIGTERM to the server itself (the first process of the log), not to strace, which would
    // only detach; strace ends when it does.
    const log = () => readFileSync(traceFile, 'utf8');
    process.kill(tracee(traceFile), 'SIGTERM');
    await server.stop();

    const calls = parse(log());
    // The -wal file's descriptors: SQLite's (written) and the store's own (synced).
    const walFds = new Set(
      calls
        .filter((c) => c.name === 'openat' && /-wal"/.test(c.text) && /^\d+$/.test(c.result))
        .map((c) => Number(c.result)),
    );
    assert.ok(walFds.size >= 1, 'the server opened the -wal file');
    const walWrites = calls.filter((c) => c.name === 'pwrite64' && walFds.has(c.fd));
    const walSyncs = calls.filter(
      (c) => (c.name === 'fdatasync' || c.name === 'fsync') && walFds.has(c.fd) && c.result === '0',
    );
    const responses = calls.filter(
      (c) => (c.name === 'writev' || c.name === 'write') && c.text.includes('HTTP/1.1 200'),
    );
    let sharedSyncs = new Set<number>();
    for (const name of names) {
      const written = walWrites.find((c) => c.text.includes(name));
      assert.ok(written, `no WAL write holds ${name}`);
      // strace writes the body's quotes escaped: {\"name\":\"…\"}.
      const answered = responses.find((c) => c.text.includes(`\\"name\\":\\"${name}\\"`));
      assert.ok(answered, `no response names ${name}`);
      const sync = walSyncs.find((s) => s.line > written.done && s.done < answered.line);
      assert.ok(
        sync,
        `${name}: WAL written on line ${written.line}, answered on line ${answered.line}, with no fdatasync of the WAL between`,
      );
      sharedSyncs = new Set([...sharedSyncs, sync.line]);
    }
    // 51 writes, far fewer syncs: concurrent writes share them (group commit).
    assert.ok(sharedSyncs.size < names.length, `${sharedSyncs.size} syncs for ${names.length} writes`);
  });
});

describe('durability: a failed fdatasync is never acknowledged', { skip }, () => {
  // strace makes the third fdatasync of the WAL fail with EIO, as a failing disk would; the
  // next ones succeed, and must not be trusted: the pages that failed may be gone. strace counts
  // calls per thread: one thread in libuv's pool makes "the third" the third of the process.
  // -P leaves the syncs of the database file (checkpoints) out of the count.
  const { server: traced } = tracedServer(
    'eio',
    (dir) => [
      '-P',
      join(dir, 'plant-store.db-wal'),
      '-e',
      'trace=fdatasync',
      '-e',
      'inject=fdatasync:error=EIO:when=3',
    ],
    { UV_THREADPOOL_SIZE: '1' },
  );

  it('answers 503 to the write whose sync failed and to every write after it, and /readyz says why', async () => {
    const server = traced();
    const statuses: number[] = [];
    for (let i = 1; i <= 8; i++)
      statuses.push((await postPlant(server.url, server.token, `{"id":${i},"name":"p${i}"}`)).status);
    const firstFailure = statuses.indexOf(503);
    assert.ok(firstFailure >= 0, `no write failed: ${statuses.join(' ')}`);
    assert.ok(
      statuses.slice(firstFailure).every((s) => s === 503),
      statuses.join(' '),
    );
    const ready = await send(server.url, { path: '/readyz' });
    assert.equal(ready.status, 503);
    assert.match(ready.text, /failed to sync the store \(EIO\)/);
  });
});

describe('durability: checkpoints copy only what is synced, and sync it before the WAL starts over', { skip }, () => {
  // Every sync made 10 ms slower, as on a slow disk: commits wait for theirs while a
  // checkpoint comes, and a WAL started over too early would show before the sync.
  const { traceFile, server: traced } = tracedServer(
    'checkpoint',
    () => ['-e', 'trace=openat,pwrite64,fdatasync,fsync', '-e', 'inject=fdatasync:delay_exit=10000'],
    { SQLITE_CHECKPOINT_PAGES: '1000' },
  );

  it('syncs the WAL before copying its pages into the database file, and that file before the WAL is reused', async () => {
    const server = traced();
    // SQLite checkpoints inside the commit that takes the WAL past SQLITE_CHECKPOINT_PAGES (1,000
    // here, so that the bursts below pass it several times). With the store's synchronous =
    // NORMAL it syncs the WAL before it copies pages into the database file, and that file before
    // the WAL is written from its start again; with OFF it would not, and a power loss could tear
    // a transaction or lose a checkpointed one. Pauses between the bursts let checkpoints finish.
    for (let burst = 0; burst < 3; burst++) {
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 10 }, async (_, worker) => {
          for (let i = 0; i < 200 && performance.now() - started < 600; i++) {
            const id = burst * 10_000 + worker * 1_000 + i + 1;
            const answer = await postPlant(server.url, server.token, `{"id":${id},"name":"burst ${burst}"}`);
            assert.equal(answer.status, 200);
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 300));
    }
    process.kill(tracee(traceFile), 'SIGTERM');
    await server.stop();

    const calls = parse(readFileSync(traceFile, 'utf8'));
    const fdsOf = (file: RegExp) =>
      new Set(
        calls
          .filter((c) => c.name === 'openat' && file.test(c.text) && /^\d+$/.test(c.result))
          .map((c) => Number(c.result)),
      );
    const walFds = fdsOf(/plant-store\.db-wal"/);
    const dbFds = fdsOf(/plant-store\.db"/);
    const synced = (fds: Set<number>) =>
      calls.filter((c) => (c.name === 'fdatasync' || c.name === 'fsync') && fds.has(c.fd) && c.result === '0');
    const offset = (c: Call) => Number(/, (\d+)(?:\)| <unfinished)/.exec(c.text.slice(c.text.lastIndexOf(',')))?.[1]);
    const walWrites = calls.filter((c) => c.name === 'pwrite64' && walFds.has(c.fd));
    // Pages copied by checkpoints: writes of the database file once the server is up (the
    // migrations at its start write the file directly).
    const firstWalWrite = walWrites[0]!;
    const copies = calls.filter((c) => c.name === 'pwrite64' && dbFds.has(c.fd) && c.line > firstWalWrite.line);
    assert.ok(copies.length > 0, 'no checkpoint copied pages into the database file');
    for (const copy of copies) {
      const lastWalWrite = walWrites.filter((w) => w.line < copy.line).at(-1)!;
      assert.ok(
        synced(walFds).some((s) => s.line > lastWalWrite.done && s.done < copy.line),
        `page copied on line ${copy.line} with the WAL written on line ${lastWalWrite.line} and not synced since`,
      );
    }
    // The WAL starts over with a new header (32 bytes at offset 0) once everything was copied.
    const restarts = walWrites.filter(
      (w) => offset(w) === 0 && w.line > firstWalWrite.line && copies.some((c) => c.line < w.line),
    );
    assert.ok(restarts.length > 0, 'the WAL never started over');
    for (const restart of restarts) {
      const lastCopy = copies.filter((c) => c.line < restart.line).at(-1)!;
      assert.ok(
        synced(dbFds).some((s) => s.line > lastCopy.done && s.done < restart.line),
        `WAL started over on line ${restart.line}, with pages copied on line ${lastCopy.line} and the database file not synced since`,
      );
    }
  });
});
