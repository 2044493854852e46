import { ENDPOINT_ID } from './webhook-rules.js';

/** A `webhook-id`: `msg_` and at most 60 more characters (a new change's is `msg_<position>`). */
const EVENT_ID = /^msg_[A-Za-z0-9_-]{1,60}$/;

/**
 * A delivery's id, as `webhook list` shows it and `webhook redeliver` takes it: its endpoint's id
 * and its event's webhook-id, `ep_…/msg_…` (neither holds a `/`).
 */
export const deliveryId = (endpointId: string, eventId: string) => `${endpointId}/${eventId}`;

/**
 * What `webhook redeliver` was given: one delivery (`ep_…/msg_…`), or an event (`msg_…`) and so
 * its every delivery; undefined when the text is neither.
 */
export function redeliveryTarget(text: string): { eventId: string; endpointId?: string } | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return EVENT_ID.test(text) ? { eventId: text } : undefined;
  const endpointId = text.slice(0, slash);
  const eventId = text.slice(slash + 1);
  return ENDPOINT_ID.test(endpointId) && EVENT_ID.test(eventId) ? { endpointId, eventId } : undefined;
}
