import Negotiator from 'negotiator';

/**
 * What GET /plants/changes answers, in the order a tie goes: the same preference for both (`*\/*`,
 * or no Accept at all) gets the JSON page, which every client reads.
 */
const OFFERED = ['application/json', 'text/event-stream'];

/**
 * A stream when the client prefers Server-Sent Events to the JSON page (an EventSource sends
 * `Accept: text/event-stream`), by RFC 9110 §12.5.1: the higher q wins, then the more specific
 * range, then the range listed first. `application/json, text/event-stream;q=0.1` prefers the
 * page; `text/event-stream;q=0` refuses the stream. An Accept that allows neither gets the page,
 * as it did before negotiation (the route has nothing else to offer).
 */
export function prefersEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return new Negotiator({ headers: { accept } }).mediaType(OFFERED) === 'text/event-stream';
}
