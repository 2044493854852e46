// The fan-out with many streams, on a log in memory and sinks that record what they are handed:
// the keep-alives go out in turns, not to every stream in one (10,000 socket writes in one turn of
// the event loop held every request and every change behind them).
import assert from 'node:assert/strict';
import { after, describe, it, mock } from 'node:test';
import { ChangeHub, ChangeStreams, HEARTBEAT_MS, type Client, type Sink } from '../../src/feed/index.js';
import { changeOf, type Change, type ChangeFilter } from '../../src/domain/change.js';
import { memoryLog } from '../support/memory-log.js';
import { pollUntil } from '../support/poll.js';

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
  const open = (sink: Sink, filter: ChangeFilter = {}) =>
    streams.open(streams.admit('token:t', 'credential', stays), sink, hub.current, filter);
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
  it('moves the streams its filter keeps silent on together, and each gets what passes it once, in order', async () => {
    const log = memoryLog([]);
    const { hub, streams, open } = await fanOut(log);
    stops.push(() => (streams.closeAll(), hub.stop()));
    const rare = Array.from({ length: 50 }, () => recordingSink());
    const all = recordingSink();
    for (const s of rare) open(s, { tags: ['rare'] });
    open(all);
    const written: Change[] = [];
    const write = async (tag: string | null) => {
      const position = BigInt(written.length + 1);
      const body = JSON.stringify({ id: Number(position), name: 'x' });
      written.push(changeOf({ position, type: 'plant.created', id: position, body, tag, oldTag: null, time: 0 }));
      log.replace([...written]);
      log.written(position);
      assert.ok(await pollUntil(async () => all.text.endsWith(`e${position};`), 2000, 1), all.text);
    };
    for (let i = 0; i < 30; i++) await write(i % 2 ? 'common' : null);
    assert.deepEqual(
      rare.map((s) => s.text),
      rare.map(() => ''),
    );
    // Parked: the flushes of the last changes visited only the stream that follows everything.
    assert.equal((streams as unknown as { active: Set<unknown> }).active.size, 1);
    await write('rare');
    await write('common');
    await write('rare');
    for (let i = 0; i < 3; i++) await write(null);
    assert.deepEqual(
      rare.map((s) => s.text),
      rare.map(() => 'e31;e33;'),
    );
    // Each keep-alive says how far its stream looked: to the last change, with the others parked.
    for (let turn = 0; turn < 10; turn++) (streams as unknown as { heartbeat(): void }).heartbeat();
    assert.deepEqual(
      rare.map((s) => s.text),
      rare.map(() => 'e31;e33;h;b36;'),
    );
  });
});
