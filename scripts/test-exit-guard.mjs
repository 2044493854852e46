// Loaded into every test file's process by scripts/test.mjs (--import). A test that timed out may
// leave a server, a socket or a child process open; its file's process then never exits and the
// run waits on it forever. So once a file's tests are over, a process still running 30 s later
// exits with code 1, naming what holds it open: that file fails and the run goes on.
// (node --test-force-exit would end it at once, but it silently drops test results that are still
// on their way to the runner: nodejs/node#64833, seen here as 29 of 44 results of a file missing.)
import { after } from 'node:test';

const GRACE_MS = 30_000;

if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    setTimeout(() => {
      const held = process.getActiveResourcesInfo().join(', ');
      process.stderr.write(
        `this test file's process is still running ${GRACE_MS / 1000} s after its last test, held open by: ${held}\n`,
      );
      process.exit(1);
    }, GRACE_MS).unref();
  });
}
