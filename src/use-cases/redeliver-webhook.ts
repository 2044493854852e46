import { deliveryId, redeliveryTarget } from '../domain/delivery-id.js';
import { ConflictError, InvalidInputError, NotFoundError } from '../domain/errors.js';
import type { Redelivery } from '../domain/webhook.js';
import type { Store } from '../store/store.js';

/** Where a delivery that was not queued stands, to follow its id: "was delivered", "is pending". */
function standing(r: Redelivery): string {
  if (r.state === 'delivered') return 'was delivered';
  if (r.state === 'pending') return 'is pending (not given up yet)';
  return `was given up, but its endpoint is disabled (${r.endpointDisabled}): remove it and add it again`;
}

/**
 * `webhook redeliver`: puts a given-up delivery (`ep_…/msg_…`), or every given-up delivery of an
 * event (`msg_…`), back in the outbox, with its webhook-id, for the dispatcher of a running server
 * to sign and send afresh, with a new retry window. Resolves to what it found, each with whether
 * it was queued; refuses an id that names no delivery (NotFoundError) and one whose deliveries
 * are none of them given up to an enabled endpoint (ConflictError, saying where each stands).
 */
export async function redeliverWebhook(
  { webhooks }: Pick<Store, 'webhooks'>,
  text: string,
  now = Date.now(),
): Promise<Redelivery[]> {
  const target = redeliveryTarget(text);
  if (target === undefined) {
    throw new InvalidInputError(
      `"${text}" is neither a delivery id (ep_…/msg_…) nor a webhook-id (msg_…), as webhook list shows them`,
    );
  }
  const found = await webhooks.redeliver(target, now);
  if (found.length === 0) {
    const what = target.endpointId === undefined ? 'event' : 'delivery';
    throw new NotFoundError(`no ${what} "${text}" (an unknown id, or its event was pruned from the change log)`);
  }
  if (found.some((r) => r.queued)) return found;
  const first = found[0]!;
  if (found.length === 1) {
    throw new ConflictError(`delivery ${deliveryId(first.endpointId, first.eventId)} ${standing(first)}`);
  }
  const each = found.map((r) => `${r.endpointId} ${standing(r)}`).join('; ');
  throw new ConflictError(`no delivery of ${first.eventId} is given up: ${each}`);
}
