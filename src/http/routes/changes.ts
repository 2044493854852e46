import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerCredential } from '../../auth/verify-bearer.js';
import { InvalidInputError } from '../../domain/errors.js';
import {
  filterOf,
  listChanges,
  startingPoint,
  type ChangesInput,
  type ChangeStreams,
  type Feed,
  type PlantsAsOf,
} from '../../feed/index.js';
import { answerSnapshot, sendSnapshot } from '../streams/change-streams.js';
import { FeedResponse } from '../streams/feed-response.js';
import { ticketRecheck } from '../streams/change-streams-of.js';
import { prefersEventStream } from '../headers/negotiate.js';
import { addVary } from '../headers/vary.js';
import { positionHeader, readsAtLeast } from '../headers/read-position.js';

/** The next page's link repeats the filters, so following it keeps them. */
function nextLink(query: ChangesInput, after: bigint): string {
  const params = [`limit=${query.limit}`];
  for (const tag of query.tag ?? []) params.push(`tag=${encodeURIComponent(tag)}`);
  if (query.id !== undefined) params.push(`id=${query.id}`);
  params.push(`after=${after}`);
  return `</plants/changes?${params.join('&')}>; rel="next"`;
}

/** GET /plants/changes: pages, long polls and streams of the change log. */
export async function changeRoutes(
  app: FastifyInstance,
  { feed, streams }: { feed: Feed; streams: ChangeStreams },
): Promise<void> {
  // Long polls answer at once when the server starts closing; streams end (their readers resume).
  const closing = new AbortController();
  app.addHook('preClose', async () => {
    closing.abort();
    streams.closeAll();
  });

  // Places are shared by principal (one token, one JWT subject), never by the raw credential.
  const holderOf = (request: FastifyRequest) => request.principal?.limitKey ?? 'anonymous';
  // A stream opened with a ticket is checked again by the token that made it (an identity
  // provider's, by its ticket, which ends with it).
  const credentialOf = (request: FastifyRequest) =>
    request.ticket === undefined
      ? bearerCredential(request.headers.authorization)
      : ticketRecheck(request.ticket, request.principal);

  app.operation(
    'listChanges',
    async (request, reply) => {
      const { query } = request;
      if (query.id !== undefined && query.tag !== undefined) {
        throw new InvalidInputError('id and tag exclude each other: one plant has one history');
      }
      if (query.snapshot && query.after !== undefined) {
        throw new InvalidInputError(
          'snapshot=true starts from the plants as they are; after= from a position: give one',
        );
      }
      const stream = request.method === 'GET' && prefersEventStream(request.headers.accept);
      if (query.snapshot && query.wait !== undefined) {
        throw new InvalidInputError('snapshot=true answers at once, with the plants as they are: it does not wait');
      }
      // A stream, or a snapshot as JSON: a place of CHANGES_MAX_STREAMS, taken before anything is
      // awaited, and the reply the route's own from then on.
      if (stream || query.snapshot) {
        const response = new FeedResponse(request.raw, reply.raw);
        const place = streams.admit(holderOf(request), credentialOf(request), response);
        const lastEventId = stream ? request.headers['last-event-id'] : undefined;
        let after = 0n;
        let snapshot: PlantsAsOf | undefined;
        try {
          // A reconnect with Last-Event-ID has had its snapshot: it follows on.
          if (query.snapshot && lastEventId === undefined) snapshot = await feed.plantsAsOf();
          else {
            const from = lastEventId === undefined ? query.after : positionHeader('last-event-id', lastEventId);
            // Without a position, new changes only: from the end as the store has it now.
            after = from === undefined ? (await feed.hub.bounds()).current : await startingPoint(feed, from);
          }
        } catch (err) {
          place.release();
          throw err;
        }
        // Another principal took its place while its starting point was read (fair share): 503.
        if (place.evictedBy) {
          await snapshot?.close();
          throw place.evictedBy;
        }
        reply.hijack();
        // The client left while the starting point was read: its place is back, nothing to send.
        if (place.gone) {
          await snapshot?.close();
          reply.raw.destroy();
          return reply;
        }
        addVary(reply, 'Accept');
        const stillWanted = () => !place.gone && !closing.signal.aborted;
        if (!stream) {
          await answerSnapshot(
            reply,
            response,
            snapshot!,
            filterOf(query),
            nextLink(query, snapshot!.position),
            stillWanted,
          );
          place.release();
          return reply;
        }
        response.begin({
          ...(reply.getHeaders() as OutgoingHttpHeaders),
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          // A proxy that buffers answers (nginx) would hold the events back.
          'x-accel-buffering': 'no',
        });
        if (snapshot) {
          try {
            const synced = await sendSnapshot(response, snapshot, filterOf(query), stillWanted);
            if (synced === undefined) throw new Error('the stream ended during its snapshot');
            after = synced;
          } catch (err) {
            // The client left, the server is closing, or the store failed: the reader reconnects
            // and, having no Last-Event-ID yet, gets the snapshot again.
            if (stillWanted()) request.log.warn({ err }, 'a snapshot of the plants failed');
            place.release();
            response.close(false);
            return reply;
          }
        }
        streams.open(place, response, after, filterOf(query));
        return reply;
      }
      // The same URL answers pages or a stream by Accept: a cache must keep them apart.
      addVary(reply, 'Accept');
      // A long poll holds a place of CHANGES_MAX_STREAMS while it waits, as a stream does, and
      // gives it back when it answers or its client leaves (which ends the wait); its credential
      // is checked again while it waits, as a stream's is.
      const place = query.wait
        ? streams.admit(holderOf(request), credentialOf(request), new FeedResponse(request.raw, reply.raw))
        : undefined;
      let page;
      try {
        const signal = place ? AbortSignal.any([closing.signal, place.signal]) : closing.signal;
        page = await listChanges(feed, query, { signal, atLeast: readsAtLeast(request.headers) });
      } finally {
        place?.release();
      }
      // Its credential was revoked (or expired) while it waited: the refusal, not the page.
      if (place?.refusal) throw place.refusal;
      if (page.nextAfter !== undefined) reply.header('link', nextLink(query, page.nextAfter));
      reply.header('change-position', String(page.lookedTo));
      // Each change's JSON was written once, when it was read from the log (domain/change.ts).
      return reply.type('application/json; charset=utf-8').send(`[${page.changes.map((c) => c.json).join(',')}]`);
    },
    { rawResponse: true },
  );
}
