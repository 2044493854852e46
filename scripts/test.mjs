// `npm test` after the build: every test under test/ with Node's test runner, in four processes
// that each run a quarter of the files one after the other, each test with a time limit,
// so that a hang fails the run within a minute instead of stalling it.
//
// Why a few processes holding many files (--experimental-test-isolation=none), not a process per
// file: most of a file's own cost was its start (a module graph loaded through tsx, the app and
// the conformance check built), paid 61 times. In one process it is paid once: the whole suite
// took 125 s of CPU instead of 201 s. One process runs its files in turn and waits while a test
// waits (a server starting, a rate-limit window, a webhook lease, Chromium, npm installing the
// packed client), so several share the cores: on the 2-core machine this was measured on, one
// after the other on a quiet machine, npm test (build included) took 90 s with two processes, 83 s
// with three and 77 s with four, the CPU barely moving (106, 118 and 111 s). Since, the suite is
// bound by the CPU rather than by its waits: with six processes it took as long as with four
// (181 s against 175 s, a busy machine), so a test is made faster by costing less CPU (a process
// it need not start, an app it can build in-process), not by more processes. The tests keep no
// state between files (each builds its app and its store, each server takes a port of its own),
// which is what running them in one process, and several such processes at once, needs.
//
// --test-timeout: Node 24 applies it to each test and each hook; the slowest test takes 20 s on a
// busy 2-core machine (a CLI test that starts a dozen processes): the limit is 60 s. Node 22's
// runner applied it to a whole file when every file had a process of its own; it keeps the 10
// minutes it had then.
// scripts/test-exit-guard.mjs ends a process that is still running 30 s after its last test (a
// test that timed out may leave a server or a socket open), so that it cannot keep the run
// waiting either.
//
// tsx/esm: the tests are ES modules, so only tsx's ESM hooks are registered, and the packages'
// CommonJS loads through Node's own loader, where V8's compile cache (NODE_COMPILE_CACHE, Node
// 22.1+) keeps its compiled code between runs and for the processes the tests start.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// TEST_SHARDS=<n> runs the files in n processes instead (to measure another number).
const SHARDS = Number(process.env.TEST_SHARDS) || 4;
const timeoutMs = Number(process.versions.node.split('.')[0]) >= 24 ? 60_000 : 600_000;
// The files named on the command line (scripts/test-pgbouncer.ts names the PostgreSQL ones), or all.
const named = process.argv.slice(2);
const files = named.length
  ? named
  : readdirSync('test', { recursive: true })
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `test/${f}`)
      .sort();

// Seconds each slow file took in a run of the whole suite (2-core machine, other suites running
// beside it, load average 8 to 18; every other file took under 6 s, 1.7 s on average), so that
// the processes get about the same work: the slowest first, each to the process with less so
// far. A figure out of date only makes one process finish before the others;
// TEST_DURATIONS=<file> npm test measures them again (scripts/test-durations.mjs).
const SECONDS = {
  'test/docs/docs-examples.test.ts': 62,
  'test/cli/backup-restore.test.ts': 48,
  'test/events/webhooks.test.ts': 44,
  'test/http/change-streams.test.ts': 34,
  'test/http/read-replica-identity.test.ts': 33,
  'test/cli/backup-under-load.test.ts': 32,
  'test/http/read-replicas.test.ts': 30,
  'test/docs/docs-page.test.ts': 29,
  'test/http/rate-limit.test.ts': 27,
  'test/client/package.test.ts': 25,
  'test/store/sqlite/full-disk-wal.test.ts': 22,
  'test/http/postgres-failover.test.ts': 22,
  'test/cli/operator-commands.test.ts': 21,
  'test/http/change-stream-places.test.ts': 20,
  'test/http/idle-stream-memory.test.ts': 19,
  'test/client/follow.test.ts': 19,
  'test/cli/first-start.test.ts': 16,
  'test/store/import-settles.test.ts': 15,
  'test/bench/write-loads.test.ts': 15,
  'test/http/exhaustion.test.ts': 14,
  'test/cli/import-bytes.test.ts': 14,
  'test/client/generated-paging.test.ts': 13,
  'test/cli/token-and-migrate.test.ts': 13,
  'test/tracing/off.test.ts': 12,
  'test/http/crash.test.ts': 12,
  'test/http/search-rule.test.ts': 12,
  'test/deploy/quiet-install.test.ts': 12,
  'test/tracing/otlp-export.test.ts': 12,
  'test/cli/heap.test.ts': 12,
  'test/store/batch-isolation.test.ts': 12,
  'test/events/webhook-ops.test.ts': 12,
  'test/events/fairness.test.ts': 11,
  'test/events/retry-after.test.ts': 11,
  'test/store/plant-filters-upkeep.test.ts': 11,
  'test/http/hostile-http.test.ts': 10,
  'test/store/sqlite/durability.test.ts': 9,
  'test/store/sqlite/files.test.ts': 9,
  'test/http/postgres-lock.test.ts': 9,
  'test/http/scale-out.test.ts': 9,
  'test/http/conditional-untagged.test.ts': 9,
  'test/cli/sqlite-to-postgres.test.ts': 9,
  'test/client/client.test.ts': 8,
  'test/store/change-order.test.ts': 8,
  'test/http/postgres-busy.test.ts': 8,
  'test/store/postgres-pooler.test.ts': 8,
  'test/http/lifecycle.test.ts': 8,
  'test/store/sqlite/full-disk.test.ts': 8,
  'test/json/json-test-suite.test.ts': 8,
  'test/store/postgres-outbox-plan.test.ts': 8,
  'test/cli/signals.test.ts': 8,
  'test/http/postgres-async-failover.test.ts': 8,
  'test/http/postgres-outage.test.ts': 7,
  'test/http/metrics.test.ts': 7,
  'test/http/change-stream-catch-up.test.ts': 7,
  'test/browser/client.test.ts': 7,
  'test/browser/ticket-restart.test.ts': 7,
  'test/browser/jwt-follow.test.ts': 10,
  'test/browser/change-feed.test.ts': 7,
  'test/http/plants-read-write.test.ts': 6,
  'test/log/output.test.ts': 6,
  'test/http/change-tickets.test.ts': 6,
  'test/http/batch.test.ts': 6,
  'test/http/changes.test.ts': 6,
  'test/http/overload.test.ts': 6,
  'test/events/shutdown.test.ts': 6,
  'test/store/postgres-search-cost.test.ts': 6,
  'test/cli/start-up.test.ts': 6,
};
const parts = Array.from({ length: SHARDS }, () => ({ seconds: 0, files: [] }));
for (const file of [...files].sort((a, b) => (SECONDS[b] ?? 1.7) - (SECONDS[a] ?? 1.7))) {
  const lightest = parts.reduce((a, b) => (b.seconds < a.seconds ? b : a));
  lightest.files.push(file);
  lightest.seconds += SECONDS[file] ?? 1.7;
}

const env = {
  NODE_COMPILE_CACHE: join(tmpdir(), 'plant-store-test-compile-cache'),
  ...process.env,
  PLANT_STORE_TEST_SHARD: '1',
};

// A part with no file runs nothing: `node --test` given no file would run every test it finds.
const used = parts.filter((part) => part.files.length > 0);

// Each part's report is printed whole once it ends, so that they never interleave.
const runs = used.map((part, i) => {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx/esm',
      '--import',
      new URL('./test-exit-guard.mjs', import.meta.url).href,
      '--test',
      '--experimental-test-isolation=none',
      `--test-timeout=${timeoutMs}`,
      // TEST_DURATIONS=file: each file's seconds (its top-level tests' sum) are added to it, one JSON line a file.
      ...(process.env.TEST_DURATIONS
        ? [
            '--test-reporter=spec',
            '--test-reporter-destination=stdout',
            `--test-reporter=${new URL('./test-durations.mjs', import.meta.url).href}`,
            '--test-reporter-destination=stdout',
          ]
        : []),
      ...part.files.sort(),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      process.stdout.write(`\n::: tests, part ${i + 1} of ${used.length}\n`);
      process.stdout.write(Buffer.concat(output));
      if (code !== 0)
        process.stdout.write(`::: part ${i + 1} of ${used.length} failed (${signal ?? `exit ${code}`})\n`);
      resolve(code === 0);
    });
  });
});

const passed = await Promise.all(runs);
process.exit(passed.every(Boolean) ? 0 : 1);
