// `npm test` after the build: every test under test/ with Node's test runner, two files at a time,
// each with a time limit, so that a hang fails the run within a minute instead of stalling it.
//
// Two files at a time, not more: the run is bound by CPU, not by waiting: the test processes
// themselves (a module graph loaded through tsx, the app and the conformance check built) and the
// processes some tests start (servers at about 0.8 s of CPU each until ready, npm, Chromium), on a
// 2-core machine. Measured there: when the run took 320 s, 3 at a time took as long as 2, and 4
// longer still, with tests failing on their time limits; on a quiet machine, 3 took 166 s against
// 171 s for 2, one run each, within what a run varies.
//
// --test-timeout does not mean the same on the two supported Node.js lines:
// - Node 24 applies it to each test and each hook. The slowest test takes 20 s on a busy 2-core
//   machine (a CLI test that starts a dozen processes): the limit is 60 s.
// - Node 22 applies it to each test file as a whole (every file runs in a process of its own);
//   the slowest file (test/cli/token-and-migrate.test.ts, both stores) takes 3 minutes on that
//   machine: the limit is 10 minutes.
// scripts/test-exit-guard.mjs ends a file's process that is still running 30 s after its last test
// (a test that timed out may leave a server or a socket open), so that it cannot keep the run
// waiting either.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const timeoutMs = Number(process.versions.node.split('.')[0]) >= 24 ? 60_000 : 600_000;
const files = readdirSync('test', { recursive: true })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/${f}`)
  .sort();

// tsx/esm: the tests are ES modules, so only tsx's ESM hooks are registered, and the packages'
// CommonJS loads through Node's own loader, where V8's compile cache (NODE_COMPILE_CACHE, Node
// 22.1+) keeps its compiled code between the test processes and across runs: about 0.35 s less
// CPU per test file, measured on a file that builds the app.
const run = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx/esm',
    '--import',
    new URL('./test-exit-guard.mjs', import.meta.url).href,
    '--test',
    '--test-concurrency=2',
    `--test-timeout=${timeoutMs}`,
    ...files,
  ],
  {
    stdio: 'inherit',
    env: { NODE_COMPILE_CACHE: join(tmpdir(), 'plant-store-test-compile-cache'), ...process.env },
  },
);
process.exit(run.status ?? 1);
