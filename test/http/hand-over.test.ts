// A stream whose connection carries it alone is handed over from node:http once its head is
// written (src/http/connections/hand-over.ts): Node's listeners and parser let go of it, the
// stream writes its own chunks, and it ends the connection itself. What a client sees is the same
// stream; what it costs the server is a socket's worth. SQLite only: no store work once open.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { before, describe, it } from 'node:test';
import { buildTestApp, useTestApp } from '../helper.js';
import { pollUntil } from '../support/poll.js';

/** node:http's own listeners on a connection it serves (as hand-over.ts names them). */
const NODE_LISTENERS = /^(bound socketOn(Data|End|Close|Drain)|socketOnError|socketOnTimeout|onSocket(Resume|Pause))$/;

/** A raw client: what it sent, everything it read, and when the server closed. */
function rawClient(port: number, request: string) {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
  const ended = once(socket, 'close');
  socket.write(request);
  return { socket, text: () => text, ended };
}

/** The chunks of a chunked body (RFC 9112 7.1), checked as a client reads them; `last` when it ended. */
function chunksOf(body: string): { data: string; last: boolean } {
  let data = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol < 0) return { data, last: false };
    const size = Number.parseInt(rest.slice(0, eol), 16);
    assert.ok(Number.isInteger(size), `a chunk size: ${JSON.stringify(rest.slice(0, 20))}`);
    if (size === 0) return { data, last: rest.slice(eol) === '\r\n\r\n' };
    const chunk = rest.slice(eol + 2, eol + 2 + size);
    if (chunk.length < size) return { data, last: false };
    assert.equal(rest.slice(eol + 2 + size, eol + 4 + size), '\r\n', 'each chunk ends with CRLF');
    data += chunk;
    rest = rest.slice(eol + 4 + size);
  }
}

describe('a stream handed over from node:http (SQLite only: no store work)', () => {
  it('lets go of the connection, writes the events as chunks, is logged once, and ends with the last chunk', async () => {
    // Its own app: the test closes it.
    const t = { app: await buildTestApp({ store: 'sqlite', logs: true }) };
    const streamRequest = () =>
      `GET /plants/changes HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n` +
      `Authorization: Bearer ${t.app.token}\r\n\r\n`;
    const port = Number(new URL(await t.app.listen()).port);
    const accepted: Socket[] = [];
    const onConnection = (s: Socket) => accepted.push(s);
    t.app.app.server.on('connection', onConnection);
    const client = rawClient(port, streamRequest());
    try {
      assert.ok(await pollUntil(async () => client.text().includes('retry: 1000'), 5000), 'the preamble came');
      const [head] = client.text().split('\r\n\r\n');
      assert.match(head!, /^HTTP\/1\.1 200 /);
      assert.match(head!, /\r\nconnection: close\r\n/i, 'no other request will be read from it');
      assert.match(head!, /\r\ntransfer-encoding: chunked$/im);
      const server = accepted.at(-1)!;
      const left = server.eventNames().flatMap((e) => server.listeners(e).map((l) => l.name));
      assert.deepEqual(
        left.filter((name) => NODE_LISTENERS.test(name)),
        [],
        `node:http still listens: ${left}`,
      );
      assert.equal((server as Socket & { parser?: unknown }).parser, null, "node:http's parser let go of it");

      const created = await t.app.inject({
        method: 'POST',
        path: '/plants',
        headers: { authorization: `Bearer ${t.app.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 41, name: 'Handed over' }),
      });
      assert.equal(created.status, 200);
      const body = () => client.text().slice(client.text().indexOf('\r\n\r\n') + 4);
      assert.ok(await pollUntil(async () => chunksOf(body()).data.includes('Handed over'), 5000), body());
      assert.match(chunksOf(body()).data, /id: \d+\nevent: created\ndata: \{.*"name":"Handed over".*\}\n\n/);
      const logged = t.app.logs.filter((l) => l.includes('"url":"/plants/changes"'));
      assert.equal(logged.length, 1, 'its request is logged once, when it is under way');
      assert.match(logged[0]!, /"status":200/);

      // The server closing ends it as a whole body: the last chunk, then the connection closes.
      await t.app.close();
      const closed = await Promise.race([
        client.ended.then(() => true),
        new Promise((r) => setTimeout(r, 5000, false)),
      ]);
      assert.ok(closed, 'the server closed the connection');
      assert.equal(chunksOf(body()).last, true, `ends with the last chunk: ${JSON.stringify(body().slice(-20))}`);
    } finally {
      t.app.app.server.off('connection', onConnection);
      client.socket.destroy();
      await t.app.close();
    }
  });
});

describe('a stream handed over, and its client (SQLite only)', () => {
  const t = useTestApp({ store: 'sqlite' });
  const streamRequest = () =>
    `GET /plants/changes?tag=nobody HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n` +
    `Authorization: Bearer ${t.app.token}\r\n\r\n`;
  const places = async () => {
    const res = await t.app.inject({ path: '/metrics', headers: { authorization: `Bearer ${t.app.token}` } });
    return Number(/^plant_store_change_places (\d+)$/m.exec(res.text)?.[1]);
  };
  let port = 0;
  before(async () => {
    port = Number(new URL(await t.app.listen()).port);
  });

  it('gives its place back when the client ends its side, or sends anything on it', async () => {
    const ending = rawClient(port, streamRequest());
    const sending = rawClient(port, streamRequest());
    assert.ok(await pollUntil(async () => (await places()) === 2, 5000));
    ending.socket.end();
    sending.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await Promise.all([ending.ended, sending.ended]);
    assert.ok(await pollUntil(async () => (await places()) === 0, 5000), 'both places are back');
    assert.doesNotMatch(
      sending.text(),
      /HTTP\/1\.1 200 OK[\s\S]*HTTP\/1\.1/,
      'nothing after the stream is answered on it',
    );
  });

  it('keeps a stream with a request pipelined behind it on node:http: that connection is not handed over', async () => {
    const client = rawClient(port, streamRequest() + 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    try {
      assert.ok(await pollUntil(async () => client.text().includes('retry: 1000'), 5000));
      assert.doesNotMatch(client.text().split('\r\n\r\n')[0]!, /\r\nconnection: close\r\n/i);
    } finally {
      client.socket.destroy();
    }
    assert.ok(await pollUntil(async () => (await places()) === 0, 5000));
  });
});
