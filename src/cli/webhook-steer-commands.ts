import type { Command } from 'commander';
import { deliveryId } from '../domain/delivery-id.js';
import { ENDPOINT_ID } from '../domain/webhook-rules.js';
import { redeliverWebhook } from '../use-cases/redeliver-webhook.js';
import { testWebhook, type TestAnswer } from '../use-cases/test-webhook.js';
import type { CliIo } from './io.js';
import { fail, oneLine } from './output.js';
import { withServices } from './with-services.js';

/**
 * The answer's first bytes as a JSON string, whose escapes oneLine completes (C1 controls,
 * separators, direction overrides): a subscriber's bytes are shown, never obeyed by the terminal.
 */
function bodyLine(a: TestAnswer): string | undefined {
  if (!a.bodyStart) return undefined;
  return `body: ${oneLine(JSON.stringify(a.bodyStart))}${a.bodyCut ? ' …' : ''}`;
}

/** `webhook test` and `webhook redeliver`: what an operator steers deliveries with. */
export function webhookSteerCommands(webhook: Command, io: CliIo): void {
  webhook
    .command('test')
    .description(
      'send the endpoint a signed webhook.test event now (not through the outbox) and print its answer; ' +
        'exit 1 unless it answers 2xx',
    )
    .argument('<id>', 'the endpoint id shown by webhook add and webhook list')
    .action(async (id: string) => {
      if (!ENDPOINT_ID.test(id)) fail(`"${id}" is not an endpoint id (ep_ and 16 characters, as webhook list shows)`);
      const a = await withServices(io, ({ store, config }) => testWebhook(store, config, id));
      const disabled = a.endpoint.enabled ? '' : ` (disabled: ${a.endpoint.disabledReason}; sent all the same)`;
      // The address guard refused it: it never left, and nothing was wrong with the network.
      const guarded = a.status === null && a.error?.startsWith('EPRIVATEADDRESS') === true;
      // Without an answer it may never have left (refused, a guarded address): "tried", not "sent".
      const lines = [
        `${guarded ? 'did not send' : a.status === null ? 'tried to send' : 'sent'} webhook.test ${a.webhookId} to ${a.endpoint.url}${disabled}`,
        guarded
          ? `refused: ${a.error!.replace(/^EPRIVATEADDRESS: /, '')}`
          : a.status === null
            ? `no answer after ${a.ms} ms: ${a.error}`
            : `HTTP ${a.status} in ${a.ms} ms`,
        bodyLine(a),
      ];
      io.stdout.write(`${lines.filter((l) => l !== undefined).join('\n')}\n`);
      if (guarded) {
        fail(
          'refused to send to a private address; to allow it (a receiver on this machine or your network), set WEBHOOK_ALLOW_PRIVATE=true for this command and for the server',
        );
      }
      if (a.status === null) fail(`the endpoint did not answer: ${a.error}`);
      if (a.status < 200 || a.status > 299) fail(`the endpoint answered HTTP ${a.status}, not 2xx`);
    });

  webhook
    .command('redeliver')
    .description(
      'send a given-up delivery again (ep_…/msg_…), or every given-up delivery of an event (msg_…): ' +
        'queued for the running server to send, with the same webhook-id, signed afresh',
    )
    .argument('<delivery or event>', 'a delivery id (ep_…/msg_…) or a webhook-id (msg_…), as webhook list shows them')
    .action(async (text: string) => {
      const found = await withServices(io, ({ store }) => redeliverWebhook(store, text));
      for (const r of found) {
        const id = deliveryId(r.endpointId, r.eventId);
        if (r.queued) io.stdout.write(`queued ${id}\n`);
        else
          io.stderr.write(`plant-store: left ${id}: ${r.state === 'failed' ? 'its endpoint is disabled' : r.state}\n`);
      }
    });
}
