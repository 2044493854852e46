import type { Command } from 'commander';
import { EVENT_TYPES, type EventType } from '../domain/webhook.js';
import { urlProblem } from '../events/address-guard.js';
import { addWebhook, removeWebhook } from '../use-cases/webhooks.js';
import { fail } from './output.js';
import { printTable } from './table.js';
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

export function webhookCommands(program: Command): void {
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
      if (problem !== undefined) fail(problem);
      const { endpoint, secret } = await withServices(({ store, config }) => addWebhook(store, config, url, events));
      process.stdout.write(`${endpoint.id}\n${secret}\n`);
      process.stderr.write(`plant-store: the secret above is shown only this once; store it with the receiver\n`);
    });

  webhook
    .command('list')
    .description('list endpoints, their state and recent delivery outcomes (never their secrets)')
    .option('--json', 'one JSON object per line')
    .option('--recent <n>', 'recent attempts to show per endpoint', '5')
    .action(async (opts: { json?: boolean; recent: string }) => {
      const recent = Number(opts.recent);
      if (!Number.isInteger(recent) || recent < 0 || recent > 1000) fail('--recent must be an integer from 0 to 1000');
      const list = await withServices(({ store }) => store.listEndpoints(recent));
      if (opts.json) {
        for (const e of list) process.stdout.write(`${JSON.stringify(e)}\n`);
        return;
      }
      printTable(
        ['ID', 'URL', 'EVENTS', 'STATE', 'PENDING', 'DELIVERED', 'FAILED', 'CREATED'],
        list.map((e) => [
          e.endpoint.id,
          e.endpoint.url,
          e.endpoint.events.map((t) => t.slice('plant.'.length)).join(','),
          e.endpoint.enabled ? 'enabled' : `disabled (${e.endpoint.disabledReason ?? 'unknown'})`,
          String(e.pending),
          String(e.delivered),
          String(e.failed),
          e.endpoint.createdAt.toISOString(),
        ]),
      );
      for (const e of list) {
        if (e.recent.length === 0) continue;
        process.stdout.write(`\nrecent attempts to ${e.endpoint.id}:\n`);
        printTable(
          ['WEBHOOK-ID', 'TYPE', 'STATE', 'ATTEMPTS', 'LAST', 'AT'],
          e.recent.map((r) => [
            r.eventId,
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
    .description('unsubscribe an endpoint; its undelivered events are dropped')
    .argument('<id>', 'the endpoint id shown by webhook add and webhook list')
    .action(async (id: string) => {
      await withServices(({ store }) => removeWebhook(store, id));
      process.stdout.write(`removed ${id}\n`);
    });
}
