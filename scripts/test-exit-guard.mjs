// Loaded into every test process by scripts/test.mjs (--import). A test that timed out may leave
// a server, a socket or a child process open; its process then never exits and the run waits on
// it forever. So once a process's tests are over, a process still running 30 s later exits with
// code 1, naming what holds it open: its tests fail and the run ends.
// (node --test-force-exit would end it at once, but it silently drops test results that are still
// on their way to the runner: nodejs/node#64833, seen here as 29 of 44 results of a file missing.)
import { after } from 'node:test';

const GRACE_MS = 30_000;

// NODE_TEST_CONTEXT: a file's own process, when the runner starts one per file;
// PLANT_STORE_TEST_SHARD: a process that runs many files (scripts/test.mjs).
if (process.env.NODE_TEST_CONTEXT || process.env.PLANT_STORE_TEST_SHARD) {
  after(() => {
    setTimeout(() => {
      const held = process.getActiveResourcesInfo().join(', ');
      process.stderr.write(
        `this test process is still running ${GRACE_MS / 1000} s after its last test, held open by: ${held}\n`,
      );
      process.exit(1);
    }, GRACE_MS).unref();
  });
}
