// The log's output on a pipe whose reader is slow: every line arrives, in order, and the lines
// waiting for it are held outside V8's heap (kept as strings there, they were promoted and made
// the old generation fill and be collected again and again: a server at one of two speeds).
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, write } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, mock } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LogOutput } from '../../src/log-output.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

describe('the log output', () => {
  it('keeps what waits for a slow pipe out of the heap, and writes every line in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-log-'));
    try {
      const fifo = join(dir, 'out');
      execFileSync('mkfifo', [fifo]);
      // A reader that reads nothing yet: the pipe fills (64 KiB) and the write under way waits.
      const idle = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      const fd = openSync(fifo, 'w');
      const output = new LogOutput(fd);
      const before = heapUsed();
      const lines = 20_000;
      const pad = 'x'.repeat(1000);
      // Flat strings of their own, as pino's lines are once written (not ropes sharing `pad`).
      for (let i = 0; i < lines; i++) output.write(`${JSON.stringify({ n: i, pad, é: 'ü' })}\n`);
      const held = heapUsed() - before;

      const reader = spawn('cat', [fifo]);
      closeSync(idle);
      const chunks: Buffer[] = [];
      reader.stdout.on('data', (c: Buffer) => chunks.push(c));
      await new Promise<void>((resolve) => output.flush(resolve));
      closeSync(fd);
      await new Promise((resolve) => reader.once('close', resolve));
      const got = Buffer.concat(chunks).toString('utf8').split('\n');
      assert.equal(got.pop(), '');
      assert.equal(got.length, lines);
      got.forEach((line, i) => assert.equal(line, JSON.stringify({ n: i, pad, é: 'ü' })));
      // Asserted once the pipe is read: a write left waiting would keep the test from ending.
      assert.ok(held < 4 * 1024 * 1024, `${Math.round(held / 1024)} KiB of heap held for 20 MB of lines waiting`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes a line longer than a chunk whole, between the lines around it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-log-'));
    try {
      const file = join(dir, 'log');
      const fd = openSync(file, 'w');
      const output = new LogOutput(fd);
      const long = 'é'.repeat(50_000);
      const expected = ['a', long, 'b', 'ü'.repeat(30_000), 'c'];
      for (const line of expected) output.write(`${line}\n`);
      await new Promise<void>((resolve) => output.flush(resolve));
      closeSync(fd);
      const { readFileSync } = await import('node:fs');
      assert.deepEqual(readFileSync(file, 'utf8').split('\n').slice(0, -1), expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gathers the lines of a busy moment into few writes, and flush writes at once', async () => {
    // The gathering time on a clock the test moves: five turns of the event loop take no time on
    // it, however busy the machine (on the real clock they once took more than 20 ms).
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-log-'));
    try {
      const file = join(dir, 'log');
      const fd = openSync(file, 'w');
      const writes: number[] = [];
      // Each write's completion, so that the test can wait for the file system (real I/O) while
      // its clock stands still.
      let written: Promise<void> = Promise.resolve();
      const counted = ((f: number, b: Buffer, cb: (e: Error | null, n: number) => void) => {
        writes.push(b.length);
        written = new Promise((resolve) =>
          write(f, b, (e, n) => {
            cb(e, n);
            resolve();
          }),
        );
      }) as typeof write;
      const output = new LogOutput(fd, counted);
      // Ten request lines a turn for five turns: the first at once (nothing was written before
      // it), the other 49 together in one write.
      const line = (i: number) => `${JSON.stringify({ level: 30, n: i, url: '/plants', pad: 'x'.repeat(180) })}\n`;
      for (let turn = 0; turn < 5; turn++) {
        for (let i = turn * 10; i < turn * 10 + 10; i++) output.write(line(i));
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(writes.length, 1, 'written before the gathering time');
      // The first write done (real I/O, however slow the machine), the rest wait for the clock.
      await written;
      assert.equal(writes.length, 1, 'written before the gathering time');
      mock.timers.tick(100);
      assert.equal(writes.length, 2);
      await written;
      // A chunk's worth (64 KiB) goes at once.
      for (let i = 50; i < 350; i++) output.write(line(i));
      assert.equal(writes.length, 3, 'a full chunk waited');
      output.write(line(350));
      await new Promise<void>((resolve) => output.flush(resolve));
      closeSync(fd);
      const got = readFileSync(file, 'utf8').split('\n').slice(0, -1);
      assert.deepEqual(
        got.map((l) => (JSON.parse(l) as { n: number }).n),
        [...Array(351).keys()],
      );
    } finally {
      mock.timers.reset();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
