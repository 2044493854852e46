// The fan-out's cost with many streams, on a log in memory and sinks that record what they are
// handed: the keep-alives go out in turns, not to every stream in one, and a flush that took long
// makes the next one wait as long, so that writing to the sockets leaves the writes time to run.
import assert from 'node:assert/strict';
import { after, describe, it, mock } from 'node:test';
import { ChangeHub, ChangeStreams, HEARTBEAT_MS, type Client, type Sink } from '../../src/feed/index.js';
import { changes, memoryLog } from '../support/memory-log.js';
import { pollUntil } from '../support/poll.js';

/** A sink that keeps what it is handed, with the time of each write; `cost` ms of work per write. */
function recordingSink(cost = 0): Sink & { text: string; at: number[] } {
  return {
    text: '',
    at: [],
    write(text: string) {
      const until = performance.now() + cost;
      while (performance.now() < until);
      this.text += text;
      this.at.push(performance.now());
      return true;
    },
    buffered: 0,
    drained: () => Promise.resolve(),
    close: () => {},
  };
}

const stays: Client = { gone: false, onLeave: () => () => {} };

async function fanOut(log: ReturnType<typeof memoryLog>) {
  const hub = new ChangeHub(log.changeLog, { retentionMs: 3_600_000, onError: () => {} });
  await hub.start();
  const feed = {
    hub,
    reads: () => Promise.resolve({ changes: log.changeLog }),
    plantsAsOf: () => Promise.reject(new Error('none')),
  };
  const framing = {
    event: (c: { position: bigint }) => `e${c.position};`,
    heartbeat: 'h;',
    bookmark: (p: bigint) => `b${p};`,
  };
  const streams = new ChangeStreams(feed, { max: 1000, verify: () => Promise.resolve(), onError: () => {}, framing });
  const open = (sink: Sink) => streams.open(streams.admit('token:t', 'credential', stays), sink, hub.current, {});
  return { hub, streams, open };
}

describe('the fan-out with many streams', () => {
  const stops: (() => void)[] = [];
  after(() => stops.forEach((stop) => stop()));

  it('sends the keep-alives in ten turns over the interval, each stream its own once', async () => {
    const log = memoryLog([]);
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      const { hub, streams, open } = await fanOut(log);
      stops.push(() => (streams.closeAll(), hub.stop()));
      const sinks = Array.from({ length: 40 }, () => recordingSink());
      for (const s of sinks) open(s);
      const kept = () => sinks.map((s) => s.text.split('h;').length - 1);
      mock.timers.tick(HEARTBEAT_MS / 10);
      assert.deepEqual(kept().filter((n) => n > 0).length, 4, 'a tenth of the streams in the first turn');
      mock.timers.tick(HEARTBEAT_MS - HEARTBEAT_MS / 10);
      assert.deepEqual(
        kept(),
        sinks.map(() => 1),
        'every stream once in the interval',
      );
    } finally {
      mock.timers.reset();
    }
  });

  it('waits after a long flush as long as it took before the next', async () => {
    const log = memoryLog([]);
    const { hub, streams, open } = await fanOut(log);
    stops.push(() => (streams.closeAll(), hub.stop()));
    // Ten streams whose writes take 5 ms each: a flush of 50 ms.
    const sinks = Array.from({ length: 10 }, () => recordingSink(5));
    for (const s of sinks) open(s);
    const all = changes('h', 2);
    log.replace(all.slice(0, 1));
    log.written(1n);
    assert.ok(await pollUntil(async () => sinks.every((s) => s.text === 'e1;'), 2000, 1));
    const firstEnded = Math.max(...sinks.map((s) => s.at[0]!));
    log.replace(all);
    log.written(2n);
    assert.ok(await pollUntil(async () => sinks.every((s) => s.text === 'e1;e2;'), 2000, 1));
    const secondStarted = Math.min(...sinks.map((s) => s.at[1]!));
    // Unpaced, the second flush would start its 15 ms after the change: here the 50 ms come first.
    assert.ok(secondStarted - firstEnded >= 50, `${(secondStarted - firstEnded).toFixed(1)} ms between the flushes`);
  });
});
