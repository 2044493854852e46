import { Gauge } from 'prom-client';
import { requireScope, tokenHashOf, verifyBearer, type Principal } from '../../auth/verify-bearer.js';
import { verifyTicket, verifyTicketToken } from '../../auth/verify-ticket.js';
import { TICKET_PREFIX } from '../../domain/ticket.js';
import type { Services } from '../../services.js';
import { ChangeStreams } from '../../feed/index.js';
import { sseFraming } from './change-streams.js';

/**
 * What a stream opened with a managed token's ticket is checked again by: the token's hash, after
 * this prefix. A space is in no bearer credential or ticket a client can send, so no client
 * credential reads as one.
 */
const TICKET_TOKEN = 'ticket-token ';

/** What a stream opened with `ticket` is checked again by: its managed token, else the ticket itself. */
export function ticketRecheck(ticket: string, principal: Principal | undefined): string {
  const hash = principal && tokenHashOf(principal);
  return hash === undefined ? ticket : TICKET_TOKEN + hash;
}

/**
 * The change streams of the app: a stream stays open while its credential still grants
 * plants:read, and the open streams and the log's position this instance has reached are metrics.
 */
export function changeStreams({ config, feed, verifiers, metrics, log }: Services): ChangeStreams {
  const streams = new ChangeStreams(feed, {
    max: config.changesMaxStreams,
    verify: async (credential) =>
      requireScope(
        credential.startsWith(TICKET_TOKEN)
          ? await verifyTicketToken(credential.slice(TICKET_TOKEN.length), verifiers)
          : credential.startsWith(TICKET_PREFIX)
            ? await verifyTicket(credential, verifiers, false)
            : await verifyBearer(credential, verifiers),
        'plants:read',
      ),
    onError: (err) => log.warn({ err }, 'a change stream failed; it was closed (its reader resumes)'),
    framing: sseFraming,
  });
  // An app built again on the same services (tests do) measures its own streams.
  for (const name of ['plant_store_change_streams', 'plant_store_change_places', 'plant_store_change_position']) {
    metrics.registry.removeSingleMetric(name);
  }
  new Gauge({
    name: 'plant_store_change_streams',
    help: 'Server-Sent Events streams of GET /plants/changes open on this instance.',
    registers: [metrics.registry],
    collect() {
      this.set(streams.size);
    },
  });
  new Gauge({
    name: 'plant_store_change_places',
    help: 'Places of CHANGES_MAX_STREAMS taken on this instance: streams open or opening, and long polls waiting.',
    registers: [metrics.registry],
    collect() {
      this.set(streams.held);
    },
  });
  new Gauge({
    name: 'plant_store_change_position',
    help: "The change log's position this instance's streams have reached (compare instances to see one fall behind).",
    registers: [metrics.registry],
    collect() {
      this.set(Number(feed.hub.current));
    },
  });
  return streams;
}
