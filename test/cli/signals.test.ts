// The signals that stop `plant-store serve`: SIGTERM, SIGINT and SIGHUP each drain the requests in
// flight, close the store, log "stopped" and exit 0. A signal while draining changes nothing.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { heldPost } from '../support/held-request.js';
import { startServer, type ServerProcess } from '../support/server.js';

const servers: ServerProcess[] = [];
after(async () => {
  for (const s of servers) await s.dispose();
});

interface LogLine {
  msg?: string;
  signal?: string;
  url?: string;
}
const logOf = (s: ServerProcess) => s.stdout.map((l) => JSON.parse(l) as LogLine);

/** Waits for the `count`th line whose message matches (a second signal's line is not the first's). */
async function logged(s: ServerProcess, msg: RegExp, count = 1): Promise<void> {
  const seen = () => logOf(s).filter((l) => msg.test(l.msg ?? '')).length;
  for (let i = 0; i < 200 && seen() < count; i++) await sleep(25);
  assert.ok(seen() >= count, `no ${count} × ${msg} in\n${s.stdout.join('\n')}`);
}

/**
 * Sends `signals` (the next once the server has logged the previous) while a request is in
 * flight, then lets the request finish: resolves to its answer and the process's end.
 */
async function stopWhileServing(signals: NodeJS.Signals[]) {
  const s = await startServer();
  servers.push(s);
  // 'close', not 'exit': its output has been read to the end by then, the last line included.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    s.proc.once('close', (code, signal) => resolve({ code, signal })),
  );
  let release!: () => void;
  const held = heldPost(s.url, s.token, '{"id":1,"name":"in flight"}', new Promise<void>((r) => (release = r)));
  await held.headersRead;
  for (const [i, signal] of signals.entries()) {
    s.proc.kill(signal);
    await logged(s, i === 0 ? /^shutting down/ : /^already shutting down/, Math.max(1, i));
  }
  release();
  const answer = await held.done;
  return { answer, end: await exited, log: logOf(s) };
}

describe('stopping the server', () => {
  for (const signal of ['SIGHUP', 'SIGTERM', 'SIGINT'] as const) {
    it(`${signal} drains the request in flight, logs "stopped" last and exits 0`, async () => {
      const { answer, end, log } = await stopWhileServing([signal]);
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(end, { code: 0, signal: null });
      const shutdown = log.findIndex((l) => /^shutting down/.test(l.msg ?? ''));
      assert.equal(log[shutdown]?.signal, signal);
      assert.ok(shutdown < log.findIndex((l) => l.msg === 'request' && l.url === '/plants'), 'it was in flight');
      assert.deepEqual(log.at(-1), { ...log.at(-1), msg: 'stopped', signal });
    });
  }

  it('a signal while draining (npm passes a Ctrl-C on: SIGINT twice) is logged and changes nothing', async () => {
    const { answer, end, log } = await stopWhileServing(['SIGINT', 'SIGINT', 'SIGHUP']);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(end, { code: 0, signal: null });
    assert.equal(log.filter((l) => /^already shutting down \(SIGINT\)/.test(l.msg ?? '')).length, 2);
    assert.equal(log.at(-1)?.msg, 'stopped');
  });

  it('stops as well when its log has nowhere to go (the terminal closed, a log reader gone)', async () => {
    // The terminal that ran `npm start` closing sends SIGHUP, and takes the log's output with it:
    // the last lines fail (EIO on a terminal, EPIPE on a pipe). They are lost; the stop is not.
    const s = await startServer();
    servers.push(s);
    const exited = once(s.proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    s.proc.stdout!.destroy();
    await sleep(100);
    s.proc.kill('SIGHUP');
    const end = await Promise.race([exited, sleep(8_000, 'still running 8 s after SIGHUP' as const)]);
    assert.deepEqual(end, [0, null]);
  });
});
