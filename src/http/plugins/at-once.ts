import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../errors/http-error.js';

/** A route handler, as Fastify calls it (its request and reply typed by the route). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Handler = (this: any, request: any, reply: any) => unknown;

/**
 * At most `most` requests of a route at once, from after the credential (an anonymous request
 * takes no place) to their answer: `admit` is a preParsing hook that takes a place before the body
 * is read, or answers 503; `around` wraps the route's handler. A place is held while the body is
 * read, while the handler works (a batch applied, however long the store makes it wait) and until
 * the answer is sent; a client that leaves gives it back at once when no handler works for it yet,
 * else when the handler is done. The request's own 'close' says nothing here: Node emits it once
 * the body is read, which let every batch waiting for the store hold its body without a place.
 */
export function atOnce(most: number) {
  let inFlight = 0;
  const places = new WeakMap<FastifyRequest, { working: boolean; answered: boolean; release: () => void }>();

  function admit(request: FastifyRequest, reply: FastifyReply, _payload: unknown, done: () => void): void {
    if (inFlight >= most) {
      throw new HttpError(503, `more than ${most} of these requests at once; retry later`, { 'retry-after': '1' });
    }
    inFlight++;
    let held = true;
    const place = {
      working: false,
      answered: false,
      release: () => {
        if (held) inFlight--;
        held = false;
      },
    };
    places.set(request, place);
    // 'finish': answered (by the handler, or before it: a body that is not valid); 'close': that,
    // or the client gone.
    const ended = () => {
      place.answered = true;
      if (!place.working) place.release();
    };
    reply.raw.once('finish', ended);
    reply.raw.once('close', ended);
    done();
  }

  function around<H extends Handler>(handler: H): H {
    return async function (this: unknown, request: FastifyRequest, reply: FastifyReply) {
      const place = places.get(request);
      if (place) place.working = true;
      try {
        return await handler.call(this, request, reply);
      } finally {
        if (place) {
          place.working = false;
          // Answered meanwhile (the client left), or once the answer goes out.
          if (place.answered || reply.raw.destroyed) place.release();
        }
      }
    } as H;
  }

  return { admit, around, inFlight: () => inFlight };
}
