// The records of a backup file, each kind read back by the reader its registry entry gives: the
// JSON Schema of its line (compiled with the project's Ajv) refuses what is not as the file writes
// it, naming the field in the backup's words; what a schema cannot say (the rules `token create`
// and `webhook add` keep, the plants' order) is refused after it. Each kind writes the line its
// reader reads back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadDocument } from '../../src/openapi/document.js';
import { RecordProblem, type JsonObject } from '../../src/use-cases/backup-records/record-kind.js';
import { BACKUP_RECORDS, describeCounts } from '../../src/use-cases/backup-records/registry.js';

const context = () => ({
  doc: loadDocument(),
  config: { webhookAllowPrivate: false, webhookSecretKey: undefined },
  report: { sealedSecrets: 0, unopenedSecrets: 0 },
});

const records = (type: string) => BACKUP_RECORDS.find((r) => r.type === type)!;

/** The reader of `type`'s lines, for one restore. */
const reader = async (type: string) => (await records(type).reader(context())) as (line: JsonObject) => unknown;

const TOKEN = {
  type: 'token',
  id: '20c830ea13d3',
  name: 'api',
  hash: 'a'.repeat(64),
  prefix: 'pst_Tt0T',
  scopes: ['plants:read'],
  createdAt: '2025-01-02T03:04:05.678Z',
  expiresAt: null,
  revokedAt: '2025-02-01T00:00:00.000Z',
};
const WEBHOOK = {
  type: 'webhook',
  id: 'ep_TestEndpoint0001',
  url: 'https://hooks.example/plants',
  events: ['plant.created'],
  secret: 'whsec_AwoRGB8mLTQ7QklQV15lbHN6gYiPlp2kq7K5wMfO1dw=',
  enabled: false,
  disabledReason: 'the endpoint answered 410 Gone',
  createdAt: '2025-01-02T03:04:05.678Z',
};

/** Reads `line` with a fresh reader of its type; the RecordProblem's message, or undefined. */
async function problem(line: JsonObject): Promise<string | undefined> {
  try {
    (await reader(line.type as string))(line);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof RecordProblem, String(err));
    return err.message;
  }
}

describe('the records of a backup', () => {
  it('reads back, as it was, each record its kind writes', async () => {
    const plant = '{"type":"plant","id":9223372036854775807,"name":"max","tag":""}';
    for (const [type, line, text] of [
      ['token', TOKEN, JSON.stringify(TOKEN)],
      ['webhook', WEBHOOK, JSON.stringify(WEBHOOK)],
      ['plant', { type: 'plant', id: 9223372036854775807n, name: 'max', tag: '' }, plant],
    ] as const) {
      const read = (await reader(type))(line);
      assert.equal((records(type).line as (record: unknown) => string)(read), text);
    }
  });

  const cases: [string, JsonObject, string][] = [
    ['a token with a field it does not have', { ...TOKEN, colour: 'green' }, 'unknown field "colour" in a token'],
    ['a token without its hash', (({ hash: _, ...t }) => t)(TOKEN), 'a token has no "hash"'],
    [
      'a token whose scopes are a string',
      { ...TOKEN, scopes: 'plants:read' },
      `a token's "scopes" must be a list of strings`,
    ],
    ['a token whose id is a number', { ...TOKEN, id: 12 }, `a token's "id" must be a string`],
    [
      'a token created on a day that does not exist',
      { ...TOKEN, createdAt: '2025-02-30T00:00:00.000Z' },
      `a token's "createdAt" must be a time like 2025-01-31T12:00:00.000Z`,
    ],
    [
      'a token whose expiry is a time without its milliseconds',
      { ...TOKEN, expiresAt: '2026-01-02T03:04:05Z' },
      `a token's "expiresAt" must be a time like 2025-01-31T12:00:00.000Z, or null`,
    ],
    [
      'a token the rules refuse',
      { ...TOKEN, scopes: [] },
      `a token's "scopes" must name at least one scope (plants:read, plants:write, metrics:read)`,
    ],
    [
      'a webhook whose enabled is a string',
      { ...WEBHOOK, enabled: 'yes' },
      `a webhook's "enabled" must be true or false`,
    ],
    [
      'a webhook whose reason is a number',
      { ...WEBHOOK, disabledReason: 410 },
      `a webhook's "disabledReason" must be a string or null`,
    ],
    [
      'a webhook whose events are not strings',
      { ...WEBHOOK, events: [1] },
      `a webhook's "events" must be a list of strings`,
    ],
    [
      'a plant with a field it does not have',
      { type: 'plant', id: 1, name: 'a', colour: 'green' },
      'unknown field "colour" in a plant',
    ],
    ['a plant without a name', { type: 'plant', id: 1 }, 'a plant has no "name"'],
    ['a plant the API would refuse', { type: 'plant', id: 1, name: '' }, 'name must have at least 1 character'],
  ];
  for (const [what, line, message] of cases) {
    it(`refuses ${what}`, async () => assert.equal(await problem(line), message));
  }

  it('refuses a second token with the same id, and plants out of order', async () => {
    const tokens = await reader('token');
    tokens(TOKEN);
    assert.throws(() => tokens({ ...TOKEN, hash: 'b'.repeat(64) }), /a second token with id "20c830ea13d3"/);
    const plants = await reader('plant');
    plants({ type: 'plant', id: 2, name: 'b' });
    assert.throws(() => plants({ type: 'plant', id: 2, name: 'b' }), /plant 2 is out of order/);
  });

  it('counts by kind, in the order of the end record', () => {
    assert.equal(describeCounts({ tokens: 1, webhooks: 0, plants: 2 }), '2 plants, 1 token, 0 webhook endpoints');
  });
});
