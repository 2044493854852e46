// The limit of requests at once (POST /plants/batch's 8) holds a place from before the body is
// read until the answer is sent, whatever the store makes the handler wait: the request's own
// 'close', which Node emits once the body is read, gives nothing back. A client that leaves gives
// its place back at once when no handler works for it, else when the handler is done.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { atOnce } from '../../src/http/plugins/at-once.js';

/** A request and reply as far as the limit looks at them: their raw streams' events. */
function exchange() {
  const raw = Object.assign(new EventEmitter(), { destroyed: false });
  const request = { raw: new EventEmitter() } as unknown as FastifyRequest;
  const reply = { raw } as unknown as FastifyReply;
  return {
    request,
    reply,
    bodyRead: () => (request.raw as EventEmitter).emit('close'),
    answered: () => {
      raw.emit('finish');
      raw.emit('close');
    },
    left: () => {
      raw.destroyed = true;
      raw.emit('close');
    },
  };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('at most N requests at once', () => {
  it('holds a place while the handler works and until the answer is sent', async () => {
    const places = atOnce(2);
    const store = deferred();
    const handler = places.around(async (_request: unknown, _reply: unknown) => store.promise);
    const [a, b, c] = [exchange(), exchange(), exchange()];
    for (const x of [a, b]) places.admit(x.request, x.reply, undefined, () => {});
    const working = [a, b].map((x) => handler(x.request, x.reply) as Promise<unknown>);
    // The bodies are read: Node says 'close' of each request, and the handlers wait for the store.
    a.bodyRead();
    b.bodyRead();
    assert.throws(() => places.admit(c.request, c.reply, undefined, () => {}), /more than 2 of these requests at once/);
    store.resolve();
    await Promise.all(working);
    assert.equal(places.inFlight(), 2, 'applied, not yet answered');
    a.answered();
    b.answered();
    assert.equal(places.inFlight(), 0);
    places.admit(c.request, c.reply, undefined, () => {});
    assert.equal(places.inFlight(), 1);
  });

  it('a client that leaves gives its place back: at once before the handler, after it once it works', async () => {
    const places = atOnce(1);
    const early = exchange();
    places.admit(early.request, early.reply, undefined, () => {});
    early.left();
    assert.equal(places.inFlight(), 0, 'left while its body was read');

    const store = deferred();
    const late = exchange();
    places.admit(late.request, late.reply, undefined, () => {});
    const working = places.around(async (_request: unknown, _reply: unknown) => store.promise)(
      late.request,
      late.reply,
    ) as Promise<unknown>;
    late.left();
    assert.equal(places.inFlight(), 1, 'its batch is still being applied');
    store.resolve();
    await working;
    assert.equal(places.inFlight(), 0);
  });

  it('a handler that fails gives the place back once its error is answered', async () => {
    const places = atOnce(1);
    const x = exchange();
    places.admit(x.request, x.reply, undefined, () => {});
    await assert.rejects(
      places.around(async (_request: unknown, _reply: unknown) => {
        throw new Error('refused');
      })(x.request, x.reply) as Promise<unknown>,
    );
    assert.equal(places.inFlight(), 1);
    x.answered();
    assert.equal(places.inFlight(), 0);
  });
});
