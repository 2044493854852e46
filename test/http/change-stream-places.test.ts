// The places of CHANGES_MAX_STREAMS, on both stores, as an attacker would spend them: clients
// that leave while their request waits, long polls, one principal taking every place, readers
// that never read. Each place is given back whenever its client leaves, at any point.
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { REFUSED_GRACE_MS } from '../../src/http/connections/connections.js';
import { createToken } from '../../src/use-cases/create-token.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { stores, suiteOptions } from '../support/stores.js';

/** Opens a stream the way EventSource does; resolves once the status is in. */
function openStream(base: string, token: string, path = '/plants/changes', headers: Record<string, string> = {}) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(`${base}${path}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...headers },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.on('error', () => undefined);
      res.resume();
      resolve(res);
    });
    req.end();
  });
}

/** Sends `text` on a socket of its own, and destroys the socket as soon as it is written. */
function sendAndLeave(port: number, text: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.once('close', () => resolve());
    socket.once('connect', () => socket.write(text, () => socket.destroy()));
  });
}

/** Every read of the log's end takes `ms` more (a slow store): the window before a stream opens. */
function slowBounds(app: TestApp, ms: number): () => void {
  const { hub } = app.services.feed;
  const bounds = hub.bounds.bind(hub);
  hub.bounds = async () => {
    await new Promise((r) => setTimeout(r, ms));
    return bounds();
  };
  return () => {
    hub.bounds = bounds;
  };
}

async function gauge(app: TestApp, name: string): Promise<number> {
  const res = await app.app.inject({ path: '/metrics', headers: { authorization: `Bearer ${app.token}` } });
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(res.body)?.[1]);
}

for (const kind of stores) {
  describe(`the places of the change streams [${kind}]`, suiteOptions(kind), () => {
    let app: TestApp;
    let base = '';
    let port = 0;
    /** Two principals, who share the ten places. */
    let tokens: [string, string];
    before(async () => {
      app = await buildTestApp({ store: kind, env: { CHANGES_MAX_STREAMS: '10' } });
      const other = await createToken(app.services.store, { name: 'other reader', scopes: ['plants:read'] });
      tokens = [app.token, other.token];
      base = await app.listen();
      port = Number(new URL(base).port);
    });
    after(async () => {
      await app.close();
    });

    it('gives back the place of a client that leaves while its stream opens', async () => {
      const restore = slowBounds(app, 20);
      try {
        const get =
          `GET /plants/changes?tag=nobody HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n` +
          `Authorization: Bearer ${app.token}\r\n\r\n`;
        for (let round = 0; round < 8; round++) {
          await Promise.all(Array.from({ length: 10 }, () => sendAndLeave(port, get)));
        }
        // Every request has had its slow read answered, and no stream is left open for them.
        await new Promise((r) => setTimeout(r, 100));
        assert.ok(
          await pollUntil(async () => (await gauge(app, 'plant_store_change_streams')) === 0, 2000),
          `${await gauge(app, 'plant_store_change_streams')} streams left open for clients gone`,
        );
      } finally {
        restore();
      }
      // Every place is free again: all ten open (five for each of two tokens).
      const open = await Promise.all(Array.from({ length: 10 }, (_, i) => openStream(base, tokens[i % 2]!)));
      assert.deepEqual(
        open.map((r) => r.statusCode),
        Array(10).fill(200),
      );
      for (const r of open) r.destroy();
      assert.ok(await pollUntil(async () => (await gauge(app, 'plant_store_change_streams')) === 0, 2000));
    });
    it('counts long polls among the places, and gives back those whose client leaves', async () => {
      const { current } = await app.services.feed.hub.bounds();
      const get = (token: string) =>
        `GET /plants/changes?after=${current}&wait=60&tag=nobody HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Bearer ${token}\r\n\r\n`;
      const sockets = Array.from({ length: 10 }, (_, i) => {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.write(get(tokens[i % 2]!));
        return socket;
      });
      assert.ok(await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 10, 2000));
      // Every place is taken by a long poll: a stream is refused.
      const refused = await openStream(base, app.token);
      assert.equal(refused.statusCode, 503);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      for (const s of sockets) s.destroy();
      assert.ok(
        await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 0, 2000),
        'the long polls of clients gone gave their places back',
      );
      const open = await openStream(base, app.token);
      assert.equal(open.statusCode, 200);
      open.destroy();
    });

    it('gives back the place of a client that pipelined another request behind its long poll or stream, and left', async () => {
      const { current } = await app.services.feed.hub.bounds();
      const auth = `Authorization: Bearer ${app.token}\r\n`;
      const behind = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
      const firsts = [
        `GET /plants/changes?after=${current}&wait=60&tag=nobody HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`,
        `GET /plants/changes?tag=nobody HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n${auth}\r\n`,
      ];
      const sockets = firsts.map((first) => {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        // Both at once: the second waits behind the first, which answers late or never.
        socket.write(first + behind);
        return socket;
      });
      assert.ok(await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 2, 2000));
      for (const s of sockets) s.destroy();
      assert.ok(
        await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 0, 2000),
        `${await gauge(app, 'plant_store_change_places')} places kept for clients gone`,
      );
    });

    // The store plays no part: once.
    if (kind === 'sqlite')
      it('still bounds what a connection pipelines behind a stream: past the limit it is no longer read', async () => {
        let parsed = 0;
        const count = () => void parsed++;
        app.app.server.on('request', count);
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.pause();
        socket.write(
          `GET /plants/changes?tag=nobody HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n` +
            `Authorization: Bearer ${app.token}\r\n\r\n`,
        );
        assert.ok(await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 1, 2000));
        const chunk = Buffer.from('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(1000));
        for (let i = 0; i < 100; i++) socket.write(chunk);
        // Refused, the connection is not read again: the server closes it REFUSED_GRACE_MS after its
        // refusal, its client still there. What it parsed by then is all it parsed (was: a 1 s sleep).
        assert.ok(
          await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 0, REFUSED_GRACE_MS + 1000),
        );
        app.app.server.removeListener('request', count);
        // The stream, the 16 that may wait behind it, and what was in the chunk read with the one past them.
        assert.ok(parsed < 4000, `the server parsed ${parsed} of the 100,001 requests written`);
        socket.destroy();
      });

    it('answers a request pipelined behind a long poll once the poll has answered', async () => {
      const { current } = await app.services.feed.hub.bounds();
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      let text = '';
      socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
      socket.write(
        `GET /plants/changes?after=${current}&wait=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${app.token}\r\n\r\n` +
          `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
      await new Promise((resolve) => socket.once('end', resolve));
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
      assert.deepEqual(statuses, ['200', '200'], text);
      assert.match(text, /\r\n\r\n\[\]/, 'the long poll answered first, with no change');
      socket.destroy();
    });

    it('wakes a filtered long poll for a change it passes, not for others', async () => {
      const { hub } = app.services.feed;
      const waitPast = hub.waitPast.bind(hub);
      let waits = 0;
      hub.waitPast = (...args) => {
        waits++;
        return waitPast(...args);
      };
      try {
        const { current } = await hub.bounds();
        const polled = app.inject({
          path: `/plants/changes?after=${current}&wait=30&tag=wanted`,
          headers: { authorization: `Bearer ${app.token}` },
        });
        assert.ok(await pollUntil(async () => waits === 1, 2000), 'the long poll waits');
        for (let i = 0; i < 50; i++) {
          await postPlant(base, app.token, JSON.stringify({ id: 9000 + i, name: `other ${i}`, tag: 'other' }));
        }
        const wanted = await postPlant(base, app.token, JSON.stringify({ id: 9100, name: 'wanted', tag: 'wanted' }));
        const res = await polled;
        assert.equal(res.status, 200);
        const changes = JSON.parse(res.text) as { position: number; id: number }[];
        assert.deepEqual(
          changes.map((c) => [String(c.position), c.id]),
          [[wanted.headers['change-position'], 9100]],
        );
        // One wait, woken once: the 50 changes of another tag woke it for nothing never.
        assert.equal(waits, 1, `waited ${waits} times`);
      } finally {
        hub.waitPast = waitPast;
      }
    });
    it('shares the places fairly: one token takes every free place, and gives up its oldest to another', async () => {
      const [a, b] = tokens;
      const byA: IncomingMessage[] = [];
      for (let i = 0; i < 10; i++) byA.push(await openStream(base, a));
      assert.deepEqual(
        byA.map((r) => r.statusCode),
        Array(10).fill(200),
        'alone, token A takes every place',
      );
      const ended = byA.map((r) => new Promise<boolean>((resolve) => r.once('close', () => resolve(true))));
      const byB: IncomingMessage[] = [];
      for (let i = 0; i < 6; i++) byB.push(await openStream(base, b));
      assert.deepEqual(
        byB.map((r) => r.statusCode),
        [200, 200, 200, 200, 200, 503],
        'token B takes places up to its share, half of them, each the oldest of token A',
      );
      assert.ok(Number(byB[5]!.headers['retry-after']) > 0);
      // Token A's five oldest streams ended (their readers resume elsewhere or later).
      const closed = await Promise.all(
        ended.map((e) => Promise.race([e, new Promise<boolean>((r) => setTimeout(() => r(false), 2000))])),
      );
      assert.deepEqual(closed, [...Array(5).fill(true), ...Array(5).fill(false)]);
      const again = await openStream(base, a);
      assert.equal(again.statusCode, 503, 'token A holds its share');
      for (const r of [...byA, ...byB, again]) r.destroy();
      assert.ok(await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 0, 2000));
    });
    it('answers 503 to a stream whose place another token takes while it opens, not a reset', async () => {
      const [a, b] = tokens;
      // Every starting point waits for the gate: the streams stay opening until the test says.
      const { hub } = app.services.feed;
      const bounds = hub.bounds.bind(hub);
      let open = () => {};
      const gate = new Promise<void>((resolve) => (open = resolve));
      let asked = 0;
      hub.bounds = async () => {
        asked++;
        await gate;
        return bounds();
      };
      try {
        // Token A's ten take every place and wait; token B then takes one of them.
        const byA = Array.from({ length: 10 }, () => openStream(base, a));
        assert.ok(await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 10, 5000));
        const before = asked;
        const byB = openStream(base, b);
        // B's request has its place (and waits at the gate) once it asks for its starting point.
        assert.ok(await pollUntil(async () => asked > before, 5000), `asked ${asked}`);
        open();
        const answers = await Promise.all(byA);
        assert.deepEqual(
          answers.map((r) => r.statusCode).sort(),
          [...Array(9).fill(200), 503],
          'the one evicted is told to retry',
        );
        const evicted = answers.find((r) => r.statusCode === 503)!;
        assert.ok(Number(evicted.headers['retry-after']) > 0);
        assert.equal((await byB).statusCode, 200);
        for (const r of [...answers, await byB]) r.destroy();
      } finally {
        open();
        hub.bounds = bounds;
      }
      assert.ok(await pollUntil(async () => (await gauge(app, 'plant_store_change_places')) === 0, 2000));
    });

    it('never hands a stream more than 1 MiB unread, however far behind it starts', async () => {
      // What each connection has been handed and its reader has not taken, seen at each write the
      // server makes to it (its response's, then the stream's own once the connection is handed
      // over): the socket's unread bytes, or the chunk itself where the kernel took it at once.
      let most = 0;
      const watch = (req: IncomingMessage) => {
        const socket = req.socket;
        const write = socket.write.bind(socket) as (chunk: string | Buffer, ...rest: unknown[]) => boolean;
        socket.write = ((chunk: string | Buffer, ...rest: unknown[]) => {
          const ok = write(chunk, ...rest);
          most = Math.max(most, socket.writableLength, Buffer.byteLength(chunk));
          return ok;
        }) as typeof socket.write;
      };
      // A reader that reads keeps the hub following, so the changes below stay in its memory.
      const reading = await openStream(base, app.token);
      const { current: start } = await app.services.feed.hub.bounds();
      const name = 'x'.repeat(200);
      for (let batch = 0; batch < 8; batch++) {
        await app.services.store.plants.writeAll(
          Array.from({ length: 1000 }, (_, i) => ({
            kind: 'create' as const,
            plant: { id: BigInt(200_000 + batch * 1000 + i), name },
          })),
        );
        // The hub hears of the import from the store, as its writes are acknowledged.
        const { current } = await app.services.store.changes.bounds();
        assert.ok(await pollUntil(async () => app.services.feed.hub.current === current, 5000));
      }
      app.app.server.on('request', watch);
      // A socket that asks for all of them and never reads.
      const socket = connect(port, '127.0.0.1');
      socket.pause();
      socket.on('error', () => undefined);
      socket.write(
        `GET /plants/changes HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n` +
          `Last-Event-ID: ${start}\r\nAuthorization: Bearer ${app.token}\r\n\r\n`,
      );
      try {
        // About 2.6 MB of events wait for it; it is handed them up to its bound, then closed for stalling.
        assert.ok(await pollUntil(async () => most > 512 * 1024, 5000), `at most ${most} bytes unread`);
        await new Promise((r) => setTimeout(r, 300));
        assert.ok(most <= 1024 * 1024 + 1024, `${most} bytes unread`);
      } finally {
        app.app.server.off('request', watch);
        socket.destroy();
        reading.destroy();
      }
    });
  });
}
