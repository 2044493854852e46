// The change hub when the log it follows becomes another history (an asynchronous failover lost
// the end of the old primary's log, and the new primary gave those positions to its own
// changes): it forgets what it holds and reads the log again, whichever way it notices, and
// never serves a change of the old history. The log is one in memory, which the test replaces.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Change } from '../../src/domain/change.js';
import { ChangeHub } from '../../src/feed/index.js';
import type { ChangeLog } from '../../src/store/changes.js';
import { changes, memoryLog } from '../support/memory-log.js';
import { pollUntil } from '../support/poll.js';

async function startedHub(log: ChangeLog) {
  const warnings: string[] = [];
  const hub = new ChangeHub(log, { retentionMs: 3_600_000, onError: (_err, what) => warnings.push(what) });
  await hub.start();
  let resets = 0;
  hub.onReset(() => resets++);
  return { hub, warnings, resets: () => resets };
}

/** What a reader of the hub's memory gets after position 0 (none when memory does not reach back there). */
const names = (hub: ChangeHub | Change[] | undefined) =>
  ((hub instanceof ChangeHub ? hub.recent(0n) : hub) ?? []).map((c) => /"name":"([^"]+)"/.exec(c.json)?.[1] ?? '');

describe('the change hub after the log became another history', () => {
  it('two reads of the log end after a restart (one by a look while the first waits): the later one leaves what was read since', async () => {
    const log = memoryLog([]);
    const { hub } = await startedHub(log.changeLog);
    try {
      hub.follow();
      log.replace(changes('old', 3));
      log.written(3n);
      assert.ok(await pollUntil(async () => hub.current === 3n, 2000, 5));
      // Each read of the end now waits until the test answers it.
      const answers: (() => void)[] = [];
      const bounds = log.changeLog.bounds;
      log.changeLog.bounds = () => new Promise((resolve) => answers.push(() => void bounds().then(resolve)));
      log.replace(changes('new', 3));
      log.replaced();
      assert.ok(await pollUntil(async () => answers.length >= 2, 2000, 5), 'a look reads the end again meanwhile');
      answers.shift()!();
      assert.ok(await pollUntil(async () => hub.current === 3n, 2000, 5));
      log.changeLog.bounds = bounds;
      log.replace(changes('new', 5));
      log.written(5n);
      assert.ok(await pollUntil(async () => hub.current === 5n, 2000, 5));
      assert.deepEqual(names(hub.recent(3n)), ['new 4', 'new 5']);
      for (const answer of answers.splice(0)) answer();
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(names(hub.recent(3n)), ['new 4', 'new 5'], 'memory kept');
      assert.equal(hub.current, 5n);
    } finally {
      hub.stop();
    }
  });

  it('a change at its latest position that differs from the one it holds: it restarts and serves only the new history', async () => {
    const log = memoryLog([]);
    const { hub, resets } = await startedHub(log.changeLog);
    try {
      hub.follow();
      log.replace(changes('old', 3));
      log.written(3n);
      assert.ok(await pollUntil(async () => hub.current === 3n, 2000, 5));
      assert.deepEqual(names(hub), ['old 1', 'old 2', 'old 3']);
      // Another history, past the positions the hub holds: no position went backwards.
      log.replace(changes('new', 5));
      log.written(5n);
      assert.ok(await pollUntil(async () => hub.current === 5n, 2000, 5));
      assert.equal(resets(), 1);
      assert.ok(!names(hub).some((n) => n.startsWith('old')), names(hub).join());
      // It follows the new history from there on.
      log.replace(changes('new', 6));
      log.written(6n);
      assert.ok(await pollUntil(async () => hub.current === 6n, 2000, 5));
      assert.deepEqual(
        hub.recent(5n)?.map((c) => c.position),
        [6n],
      );
      assert.ok(!names(hub).some((n) => n.startsWith('old')), names(hub).join());
    } finally {
      hub.stop();
    }
  });

  it('the change at its latest position pruned since: no other history, no restart', async () => {
    const log = memoryLog([]);
    const { hub, resets } = await startedHub(log.changeLog);
    try {
      hub.follow();
      log.replace(changes('old', 3));
      log.written(3n);
      assert.ok(await pollUntil(async () => hub.current === 3n, 2000, 5));
      log.replace(changes('old', 4).slice(3));
      log.written(4n);
      assert.ok(await pollUntil(async () => hub.current === 4n, 2000, 5));
      assert.equal(resets(), 0);
      assert.deepEqual(names(hub), ['old 1', 'old 2', 'old 3', 'old 4']);
    } finally {
      hub.stop();
    }
  });

  it('a log that ends before a position it saw: it restarts, and its end is the log end', async () => {
    const log = memoryLog(changes('old', 5));
    const { hub, resets } = await startedHub(log.changeLog);
    try {
      assert.equal(hub.known, 5n);
      log.replace(changes('new', 2));
      assert.deepEqual(await hub.bounds(), { floor: 1n, current: 2n });
      assert.equal(resets(), 1);
      assert.ok(await pollUntil(async () => hub.current === 2n, 2000, 5));
      assert.equal(hub.known, 2n);
    } finally {
      hub.stop();
    }
  });

  it('stopped (the server closing), it reads nothing when the store says it writes to another primary', async () => {
    const log = memoryLog(changes('old', 3));
    const { hub, resets, warnings } = await startedHub(log.changeLog);
    hub.stop();
    log.changeLog.bounds = () => Promise.reject(new Error('the store is closed'));
    log.replaced();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(resets(), 0);
    assert.deepEqual(warnings, []);
  });

  it('the store says it writes to another primary: it restarts at once, before any read', async () => {
    const log = memoryLog([]);
    const { hub, resets, warnings } = await startedHub(log.changeLog);
    try {
      hub.follow();
      log.replace(changes('old', 3));
      log.written(3n);
      assert.ok(await pollUntil(async () => hub.current === 3n, 2000, 5));
      // The same number of changes: neither the end nor a later read would tell.
      log.replace(changes('new', 3));
      log.replaced();
      assert.equal(resets(), 1);
      assert.deepEqual(names(hub), []);
      assert.ok(await pollUntil(async () => hub.current === 3n, 2000, 5));
      assert.equal(hub.recent(0n), undefined, 'readers of the start read the store');
      assert.ok(
        warnings.some((w) => w.includes('forgot the change log')),
        warnings.join(),
      );
    } finally {
      hub.stop();
    }
  });
});

describe('the change hub under a long run of writes', () => {
  it('holds at least the last 8,192 changes, each once and in order, however many it has read', async () => {
    const all = changes('h', 12_000);
    const log = memoryLog([]);
    const { hub } = await startedHub(log.changeLog);
    try {
      const unfollow = hub.follow();
      for (let n = 100; n <= all.length; n += 100) {
        log.replace(all.slice(0, n));
        log.written(BigInt(n));
        assert.ok(await pollUntil(async () => hub.current === BigInt(n), 2000, 1));
      }
      const held = hub.recent(BigInt(all.length - 8192));
      assert.deepEqual(
        held?.map((c) => c.position),
        all.slice(-8192).map((c) => c.position),
      );
      assert.equal(hub.recent(0n), undefined, 'the oldest are let go');
      unfollow();
    } finally {
      hub.stop();
    }
  });
});
