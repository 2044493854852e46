// The fan-out with many streams, on a log in memory and sinks that record what they are handed:
// the keep-alives go out in turns, not to every stream in one (10,000 socket writes in one turn of
// the event loop held every request and every change behind them).
import assert from 'node:assert/strict';
import { after, describe, it, mock } from 'node:test';
import { ChangeHub, ChangeStreams, HEARTBEAT_MS, type Client, type Sink } from '../../src/feed/index.js';
import { memoryLog } from '../support/memory-log.js';

/** A sink that keeps what it is handed. */
function recordingSink(): Sink & { text: string } {
  return {
    text: '',
    write(text: string) {
      this.text += text;
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
});
