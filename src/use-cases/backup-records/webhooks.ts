import type { EventType, WebhookEndpoint } from '../../domain/webhook.js';
import { endpointProblem, isEndpointSecret, sealedParts } from '../../domain/webhook-rules.js';
import { literalAddressProblem } from '../../events/address-guard.js';
import { openSecret } from '../../events/signing.js';
import { writeJson } from '../../json/write-json.js';
import {
  recordCheck,
  RecordProblem,
  TIME,
  type BackupRecords,
  type RecordSchema,
  type RestoreContext,
} from './record-kind.js';

/** An endpoint's line, as the file writes it. */
interface WebhookLine {
  type: 'webhook';
  id: string;
  url: string;
  events: string[];
  secret: string;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
}

const A_STRING = { type: 'string', description: 'a string' } as const;

/** What a schema can say of an endpoint's line; the rest is the rules of every endpoint (domain/webhook-rules.ts). */
const SCHEMA: RecordSchema<WebhookLine> = {
  type: 'object',
  properties: {
    type: { type: 'string', const: 'webhook' },
    id: A_STRING,
    url: A_STRING,
    events: { type: 'array', items: { type: 'string' }, description: 'a list of strings' },
    secret: A_STRING,
    enabled: { type: 'boolean', description: 'true or false' },
    disabledReason: { anyOf: [{ type: 'string' }, { type: 'null' }], description: 'a string or null' },
    createdAt: TIME,
  },
  required: ['type', 'id', 'url', 'events', 'secret', 'enabled', 'disabledReason', 'createdAt'],
  additionalProperties: false,
};

/**
 * A sealed secret is counted for the report, and one the target's WEBHOOK_SECRET_KEY opens must
 * open to a secret `webhook add` could have made.
 */
function checkSecret(secret: string, { config, report }: RestoreContext): void {
  if (!sealedParts(secret)) return;
  report.sealedSecrets++;
  let opened: string | undefined;
  try {
    opened = openSecret(secret, config.webhookSecretKey);
  } catch {
    report.unopenedSecrets++;
  }
  if (opened !== undefined && !isEndpointSecret(opened)) {
    throw new RecordProblem(`a webhook's "secret" opens to something other than a whsec_ secret`);
  }
}

/**
 * Webhook endpoints, with their state and their secrets as stored (sealed when
 * WEBHOOK_SECRET_KEY was set). The outbox of deliveries is not part of a backup. An endpoint read
 * back is held to the rules `webhook add` holds the ones it makes to (domain/webhook-rules.ts),
 * under the target's settings: whether private addresses are allowed, and the key that should
 * open sealed secrets.
 */
export const webhookRecords: BackupRecords<'webhooks'> = {
  kind: 'webhooks',
  type: 'webhook',
  noun: 'webhook endpoint',
  line: (e) =>
    writeJson({
      type: 'webhook',
      id: e.id,
      url: e.url,
      events: e.events,
      secret: e.secret,
      enabled: e.enabled,
      disabledReason: e.disabledReason,
      createdAt: e.createdAt.toISOString(),
    } satisfies WebhookLine),
  async reader(context) {
    const check = await recordCheck(SCHEMA, 'a webhook');
    const ids = new Set<string>();
    return (o) => {
      const line = check(o);
      const endpoint: WebhookEndpoint = {
        id: line.id,
        url: line.url,
        events: line.events as EventType[],
        secret: line.secret,
        enabled: line.enabled,
        disabledReason: line.disabledReason,
        createdAt: new Date(line.createdAt),
      };
      const problem = endpointProblem(endpoint);
      if (problem !== undefined) throw new RecordProblem(`a webhook's "${problem.field}" ${problem.problem}`);
      // What `webhook add` can judge without a lookup: an address in the URL itself.
      const address = literalAddressProblem(endpoint.url, context.config.webhookAllowPrivate);
      if (address !== undefined) throw new RecordProblem(`a webhook's "url" is refused: ${address}`);
      if (ids.has(endpoint.id)) throw new RecordProblem(`a second webhook with id "${endpoint.id}"`);
      ids.add(endpoint.id);
      checkSecret(endpoint.secret, context);
      return endpoint;
    };
  },
};
