import type { Command } from 'commander';
import { deliveryId } from '../domain/delivery-id.js';
import { NotFoundError } from '../domain/errors.js';
import { EVENT_TYPES, type EventType } from '../domain/webhook.js';
import { ENDPOINT_ID, urlProblem } from '../domain/webhook-rules.js';
import { addWebhook, removeWebhook } from '../use-cases/webhooks.js';
import type { CliIo } from './io.js';
import { fail, outputIsTheProduct, printJson } from './output.js';
import { printTable } from './table.js';
import { webhookSteerCommands } from './webhook-steer-commands.js';
import { withServices } from './with-services.js';

/** `created` or `plant.created`, comma-separated. */
function parseEvents(text: string): EventType[] {
  const types = new Set<EventType>();
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const type = (item.startsWith('plant.') ? item : `plant.${item}`) as EventType;
    if (!EVENT_TYPES.includes(type)) fail(`unknown event "${item}"; events are created, updated, deleted`);
    types.add(type);
  }
  if (types.size === 0) fail('--events needs at least one of created, updated, deleted');
  return EVENT_TYPES.filter((t) => types.has(t));
}

export function webhookCommands(program: Command, io: CliIo): void {
  const webhook = program.command('webhook').description('manage webhook subscribers');

  webhook
    .command('add')
    .description('subscribe a URL; prints the endpoint id, then its whsec_ secret (shown only this once)')
    .argument('<url>', 'http:// or https:// URL that receives a POST per event')
    .option('--events <list>', 'comma-separated: created, updated, deleted', 'created,updated,deleted')
    .action(async (url: string, opts: { events: string }) => {
      const events = parseEvents(opts.events);
      // A URL that cannot be one is refused before the store is opened.
      const problem = urlProblem(url);
      if (problem !== undefined) fail(`the URL ${problem}`);
      const { endpoint, secret, sealed } = await withServices(io, async ({ store, config }) => ({
        ...(await addWebhook(store, config, url, events)),
        sealed: config.webhookSecretKey !== undefined,
      }));
      // The secret is shown only this once: without it no delivery can be verified.
      outputIsTheProduct(io.stdout, 'the secret', `the endpoint was added: remove it (webhook remove ${endpoint.id})`);
      io.stdout.write(`${endpoint.id}\n${secret}\n`);
      io.stderr.write(`plant-store: the secret above is shown only this once; store it with the receiver\n`);
      if (!sealed) {
        io.stderr.write(
          'plant-store: warning: WEBHOOK_SECRET_KEY is not set, so the secret is stored unsealed: anyone who can ' +
            'read the store or its backups can read it (set WEBHOOK_SECRET_KEY for the server and the CLI to seal new secrets)\n',
        );
      }
    });

  webhook
    .command('list')
    .description('list endpoints, their state, their last failure and recent delivery outcomes (never their secrets)')
    .option('--json', 'one JSON array of endpoint objects')
    .option('--recent <n>', 'recent attempts to show per endpoint', '5')
    .action(async (opts: { json?: boolean; recent: string }) => {
      const recent = Number(opts.recent);
      if (!Number.isInteger(recent) || recent < 0 || recent > 1000) fail('--recent must be an integer from 0 to 1000');
      const stored = await withServices(io, ({ store }) => store.webhooks.listEndpoints(recent));
      // Each attempt with the id `webhook redeliver` takes.
      const list = stored.map((e) => ({
        ...e,
        recent: e.recent.map((r) => ({ deliveryId: deliveryId(e.endpoint.id, r.eventId), ...r })),
      }));
      if (opts.json) {
        printJson(io, list);
        return;
      }
      printTable(
        io.stdout,
        ['ID', 'URL', 'EVENTS', 'STATE', 'PENDING', 'DELIVERED', 'FAILED', 'LAST-FAILURE', 'CREATED'],
        list.map((e) => [
          e.endpoint.id,
          e.endpoint.url,
          e.endpoint.events.map((t) => t.slice('plant.'.length)).join(','),
          e.endpoint.enabled ? 'enabled' : `disabled (${e.endpoint.disabledReason ?? 'unknown'})`,
          String(e.pending),
          String(e.delivered),
          String(e.failed),
          e.lastFailure ? `${e.lastFailure.reason} (${e.lastFailure.at.toISOString()})` : '-',
          e.endpoint.createdAt.toISOString(),
        ]),
      );
      for (const e of list) {
        if (e.recent.length === 0) continue;
        io.stdout.write(`\nrecent attempts to ${e.endpoint.id}:\n`);
        printTable(
          io.stdout,
          ['DELIVERY', 'TYPE', 'STATE', 'ATTEMPTS', 'LAST', 'AT'],
          e.recent.map((r) => [
            r.deliveryId,
            r.type,
            r.state,
            String(r.attempts),
            r.status !== null ? `HTTP ${r.status}` : (r.error ?? '-'),
            r.at?.toISOString() ?? '-',
          ]),
        );
      }
    });

  webhook
    .command('remove')
    .description('unsubscribe an endpoint; its undelivered events are dropped (removing it again changes nothing)')
    .argument('<id>', 'the endpoint id shown by webhook add and webhook list')
    .action(async (id: string) => {
      if (!ENDPOINT_ID.test(id)) fail(`"${id}" is not an endpoint id (ep_ and 16 characters, as webhook list shows)`);
      const removed = await withServices(io, async ({ store }) => {
        try {
          await removeWebhook(store, id);
          return true;
        } catch (err) {
          if (err instanceof NotFoundError) return false;
          throw err;
        }
      });
      // A removed endpoint leaves nothing behind, so "already removed" and "never added" look alike.
      io.stdout.write(
        removed
          ? `removed ${id}\n`
          : `webhook ${id} is not subscribed (already removed, or never added); nothing changed\n`,
      );
    });

  webhookSteerCommands(webhook, io);
}
