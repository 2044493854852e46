import { createHash, type Hash } from 'node:crypto';
import type { WebhookConfig } from '../config/config.js';
import { ConflictError, InvalidInputError } from '../domain/errors.js';
import { plantRecord, type PlantRecord } from '../domain/plant.js';
import type { Scope, TokenRecord } from '../domain/token.js';
import { tokenProblem } from '../domain/token-rules.js';
import type { EventType, WebhookEndpoint } from '../domain/webhook.js';
import { endpointProblem, isEndpointSecret, sealedParts } from '../domain/webhook-rules.js';
import { literalAddressProblem } from '../events/address-guard.js';
import { openSecret } from '../events/signing.js';
import { atLine, readNdjson, type NdjsonEntry } from '../json/ndjson.js';
import { InexactNumber } from '../json/read-json.js';
import type { ApiDocument } from '../openapi/document.js';
import { newPlantCheck, type PlantCheck } from '../openapi/plant-check.js';
import { KNOWN_SCHEMA_VERSIONS, STORE_KINDS, type StoreKind } from '../store/schema-versions.js';
import type { RestoreTarget, Store } from '../store/store.js';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, type BackupCounts, type BackupHeader } from './backup.js';

/** A backup that cannot be restored: nothing was applied. */
export class RestoreRefusedError extends InvalidInputError {
  override name = 'RestoreRefusedError';
}

/** The target store holds something: a restore goes into an empty store only, and changed nothing. */
export class StoreNotEmptyError extends ConflictError {
  override name = 'StoreNotEmptyError';
}

export interface RestoreReport extends BackupCounts {
  header: BackupHeader;
  /** Endpoint secrets sealed with a WEBHOOK_SECRET_KEY, and how many of them the key given cannot open. */
  sealedSecrets: number;
  unopenedSecrets: number;
}

/** Longest line read: far above any record's (a plant's is under 4 KiB), far below a memory problem. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** Rows per insert statement. */
const BATCH = 2000;

/** A line of the backup, as the checks below name it. */
type Line = Pick<NdjsonEntry, 'number'>;

function refused(line: number, message: string): RestoreRefusedError {
  return new RestoreRefusedError(atLine(line, message));
}

type Obj = Record<string, unknown>;

/** A line's record: one JSON object. A blank line has no place in a backup. */
function parse(line: NdjsonEntry): Obj {
  if (line.kind === 'blank') throw refused(line.number, 'a blank line');
  if (line.kind === 'invalid') {
    // Not JSON, and the file ends in it without a newline: the file was cut short.
    if (line.read?.ending === '') throw refused(line.number, 'the backup is truncated: its last line is cut short');
    throw refused(line.number, line.message);
  }
  const value = line.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw refused(line.number, 'not a JSON object');
  }
  return value as Obj;
}

/** The checksum covers every byte before the end record: each line as read, its ending included. */
function hashLine(hash: Hash, line: NdjsonEntry): void {
  if (line.kind === 'value') hash.update(line.read.content).update(line.read.ending);
}

/** Checks a record's members: exactly these, no others. */
function members(line: Line, what: string, o: Obj, required: string[], optional: string[] = []): void {
  for (const key of Object.keys(o)) {
    if (!required.includes(key) && !optional.includes(key))
      throw refused(line.number, `unknown field "${key}" in ${what}`);
  }
  for (const key of required) if (!(key in o)) throw refused(line.number, `${what} has no "${key}"`);
}

function string(line: Line, what: string, o: Obj, key: string, nonEmpty = true): string {
  const v = o[key];
  if (typeof v !== 'string' || (nonEmpty && v === '')) {
    throw refused(line.number, `${what}'s "${key}" must be a${nonEmpty ? ' non-empty' : ''} string`);
  }
  return v;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function date(line: Line, what: string, o: Obj, key: string, nullable: boolean): Date | null {
  const v = o[key];
  if (v === null && nullable) return null;
  const d = typeof v === 'string' && ISO.test(v) ? new Date(v) : undefined;
  if (!d || Number.isNaN(d.getTime()) || d.toISOString() !== v) {
    throw refused(
      line.number,
      `${what}'s "${key}" must be a time like 2025-01-31T12:00:00.000Z${nullable ? ', or null' : ''}`,
    );
  }
  return d;
}

function strings(line: Line, what: string, o: Obj, key: string): string[] {
  const v = o[key];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    throw refused(line.number, `${what}'s "${key}" must be a list of strings`);
  }
  return v as string[];
}

function count(line: Line, o: Obj, key: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw refused(line.number, `the end record's "${key}" must be a count`);
  }
  return v;
}

/** A package version as npm writes one: 0.2.0, 1.0.0-rc.1. */
const isVersion = (v: unknown): v is string =>
  typeof v === 'string' && /^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(?:[-+][0-9A-Za-z.+-]{1,64})?$/.test(v);

function readHeader(line: NdjsonEntry | undefined): BackupHeader {
  if (!line) throw new RestoreRefusedError('the input is empty: not a plant-store backup');
  let o: Obj;
  try {
    o = parse(line);
  } catch {
    throw refused(1, 'not a plant-store backup (its first line is not a backup header)');
  }
  if (o.format !== BACKUP_FORMAT) throw refused(1, 'not a plant-store backup (its first line is not a backup header)');
  // The writer's version appears in the lines below, so only when it is one (never a terminal's escape).
  const by = isVersion(o.plantStore) ? ` (written by plant-store ${o.plantStore})` : '';
  if (o.version !== BACKUP_FORMAT_VERSION) {
    throw refused(
      1,
      `the backup is in format version ${String(o.version instanceof InexactNumber ? o.version.text : o.version)}${by}; ` +
        `this plant-store reads version ${BACKUP_FORMAT_VERSION} only: restore it with the plant-store that wrote it`,
    );
  }
  members(line, 'the header', o, ['format', 'version', 'plantStore', 'store', 'schema', 'takenAt']);
  const plantStore = string(line, 'the header', o, 'plantStore');
  if (!isVersion(plantStore)) throw refused(1, `the header's "plantStore" must be a version such as 0.2.0`);
  const store = o.store as StoreKind;
  if (!STORE_KINDS.includes(store)) throw refused(1, `the header's "store" must be one of ${STORE_KINDS.join(', ')}`);
  const schema = o.schema;
  if (typeof schema !== 'number' || !Number.isSafeInteger(schema) || schema < 1) {
    throw refused(1, `the header's "schema" must be a schema version`);
  }
  // Migrations may change data as well as tables (migration 3 clears token prefixes), and they
  // run on stores, not on backups: a backup goes back into a store of its own schema version.
  const known = KNOWN_SCHEMA_VERSIONS[store];
  if (schema > known) {
    throw refused(
      1,
      `the backup's ${store} schema is version ${schema}${by}, newer than this plant-store knows ` +
        `(${known}): restore it with that plant-store`,
    );
  }
  if (schema < known) {
    throw refused(
      1,
      `the backup's ${store} schema is version ${schema}${by}, older than this plant-store's (${known}): ` +
        'restore it with the plant-store that wrote it, then upgrade that store',
    );
  }
  const takenAt = date(line, 'the header', o, 'takenAt', false)!.toISOString();
  return { format: BACKUP_FORMAT, version: BACKUP_FORMAT_VERSION, plantStore, store, schema, takenAt };
}

// A token or an endpoint is read as the file writes it, then held to the rules `token create` and
// `webhook add` hold theirs to (domain/token-rules.ts, domain/webhook-rules.ts): the same functions.

function readToken(line: Line, o: Obj): TokenRecord {
  const what = 'a token';
  members(line, what, o, ['type', 'id', 'name', 'hash', 'prefix', 'scopes', 'createdAt', 'expiresAt', 'revokedAt']);
  const token: TokenRecord = {
    id: string(line, what, o, 'id', false),
    name: string(line, what, o, 'name', false),
    hash: string(line, what, o, 'hash', false),
    prefix: string(line, what, o, 'prefix', false),
    scopes: strings(line, what, o, 'scopes') as Scope[],
    createdAt: date(line, what, o, 'createdAt', false)!,
    expiresAt: date(line, what, o, 'expiresAt', true),
    revokedAt: date(line, what, o, 'revokedAt', true),
  };
  const problem = tokenProblem(token);
  if (problem !== undefined) throw refused(line.number, `a token's "${problem.field}" ${problem.problem}`);
  return token;
}

type AddressRules = Pick<WebhookConfig, 'webhookAllowPrivate'>;

function readWebhook(line: Line, o: Obj, config: AddressRules): WebhookEndpoint {
  const what = 'a webhook';
  members(line, what, o, ['type', 'id', 'url', 'events', 'secret', 'enabled', 'disabledReason', 'createdAt']);
  if (typeof o.enabled !== 'boolean') throw refused(line.number, `a webhook's "enabled" must be true or false`);
  if (o.disabledReason !== null && typeof o.disabledReason !== 'string') {
    throw refused(line.number, `a webhook's "disabledReason" must be a string or null`);
  }
  const endpoint: WebhookEndpoint = {
    id: string(line, what, o, 'id', false),
    url: string(line, what, o, 'url', false),
    events: strings(line, what, o, 'events') as EventType[],
    secret: string(line, what, o, 'secret', false),
    enabled: o.enabled,
    disabledReason: o.disabledReason,
    createdAt: date(line, what, o, 'createdAt', false)!,
  };
  const problem = endpointProblem(endpoint);
  if (problem !== undefined) throw refused(line.number, `a webhook's "${problem.field}" ${problem.problem}`);
  // What `webhook add` can judge without a lookup: an address in the URL itself.
  const address = literalAddressProblem(endpoint.url, config.webhookAllowPrivate);
  if (address !== undefined) throw refused(line.number, `a webhook's "url" is refused: ${address}`);
  return endpoint;
}

function readPlant(line: Line, o: Obj, check: PlantCheck): PlantRecord {
  members(line, 'a plant', o, ['type', 'id', 'name'], ['tag']);
  const fields: Obj = { id: o.id, name: o.name };
  if ('tag' in o) fields.tag = o.tag;
  const problem = check(fields);
  if (problem !== undefined) throw refused(line.number, problem);
  return plantRecord(BigInt(fields.id as number | bigint), fields.name as string, fields.tag as string | undefined);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Restores a backup (see backup.ts) into an empty store, whole or not at all: the records go in
 * through one transaction (store.restoreInto), and any refusal (a malformed line, an unknown
 * record, a plant the API would refuse, a truncated or altered file) rolls it back. The input is
 * read as it comes, by the NDJSON reader of `import` (json/ndjson.ts), so memory stays flat;
 * plants emit no webhook events. Tokens and endpoints are
 * held to the rules of the commands that create them, under the target's settings: whether
 * private addresses are allowed, and the WEBHOOK_SECRET_KEY that should open sealed secrets.
 */
export async function restoreStore(
  store: Store,
  doc: ApiDocument,
  input: AsyncIterable<Buffer | string>,
  config: Pick<WebhookConfig, 'webhookAllowPrivate' | 'webhookSecretKey'>,
): Promise<RestoreReport> {
  const source = readNdjson(input, MAX_LINE_BYTES);
  try {
    return await restoreFrom(source, store, doc, config);
  } finally {
    // A refusal stops the reading: the input is closed, not left half read.
    await source.return(undefined);
  }
}

/** The restore itself, from the backup's lines as the NDJSON reader gives them, in order. */
async function restoreFrom(
  source: AsyncGenerator<NdjsonEntry>,
  store: Store,
  doc: ApiDocument,
  config: Pick<WebhookConfig, 'webhookAllowPrivate' | 'webhookSecretKey'>,
): Promise<RestoreReport> {
  const first = await source.next();
  const header = readHeader(first.done ? undefined : first.value);
  const hash = createHash('sha256');
  hashLine(hash, first.value!);
  const check = await newPlantCheck(doc, 'plant');

  return store.restoreInto(async (target: RestoreTarget) => {
    const held = await target.counts();
    if (held.plants || held.tokens || held.endpoints) {
      throw new StoreNotEmptyError(
        `the store is not empty (${plural(held.plants, 'plant')}, ${plural(held.tokens, 'token')}, ` +
          `${plural(held.endpoints, 'webhook endpoint')}): restore goes into an empty store only; nothing was changed`,
      );
    }
    const report: RestoreReport = { header, plants: 0, tokens: 0, webhooks: 0, sealedSecrets: 0, unopenedSecrets: 0 };
    const tokenIds = new Set<string>();
    const tokenHashes = new Set<string>();
    const webhookIds = new Set<string>();
    let tokens: TokenRecord[] = [];
    let webhooks: WebhookEndpoint[] = [];
    let plants: PlantRecord[] = [];
    let lastId: bigint | undefined;
    // One batch of plants is inserted while the next is read: the store's work and the reading overlap.
    let inserting: Promise<unknown> = Promise.resolve();
    let failure: { error: unknown } | undefined;
    const settle = async () => {
      await inserting;
      if (failure) throw failure.error;
    };
    const flushPlants = async () => {
      await settle();
      if (plants.length === 0) return;
      const batch = plants;
      plants = [];
      inserting = target.insertPlants(batch).then(
        (inserted) => {
          if (inserted !== batch.length) failure ??= { error: new Error('a restored plant was already in the store') };
          else report.plants += batch.length;
        },
        (error: unknown) => void (failure ??= { error }),
      );
    };
    let end: { line: number; record: Obj } | undefined;
    let lastLine = 1;
    for (let next = await source.next(); !next.done; next = await source.next()) {
      const line = next.value;
      lastLine = line.number;
      if (end) throw refused(line.number, `data after the end record (line ${end.line})`);
      const o = parse(line);
      if (o.type === 'end') {
        end = { line: line.number, record: o };
        continue;
      }
      hashLine(hash, line);
      switch (o.type) {
        case 'plant': {
          const plant = readPlant(line, o, check);
          if (lastId !== undefined && plant.id <= lastId) {
            throw refused(line.number, `plant ${plant.id} is out of order: plants come by id ascending, each once`);
          }
          lastId = plant.id;
          plants.push(plant);
          if (plants.length >= BATCH) await flushPlants();
          break;
        }
        case 'token': {
          const token = readToken(line, o);
          if (tokenIds.has(token.id)) throw refused(line.number, `a second token with id "${token.id}"`);
          if (tokenHashes.has(token.hash)) throw refused(line.number, `a second token with the same hash`);
          tokenIds.add(token.id);
          tokenHashes.add(token.hash);
          tokens.push(token);
          if (tokens.length >= BATCH) {
            await target.insertTokens(tokens);
            report.tokens += tokens.length;
            tokens = [];
          }
          break;
        }
        case 'webhook': {
          const webhook = readWebhook(line, o, config);
          if (webhookIds.has(webhook.id)) throw refused(line.number, `a second webhook with id "${webhook.id}"`);
          webhookIds.add(webhook.id);
          if (sealedParts(webhook.secret)) {
            report.sealedSecrets++;
            let opened: string | undefined;
            try {
              opened = openSecret(webhook.secret, config.webhookSecretKey);
            } catch {
              report.unopenedSecrets++;
            }
            if (opened !== undefined && !isEndpointSecret(opened)) {
              throw refused(line.number, `a webhook's "secret" opens to something other than a whsec_ secret`);
            }
          }
          webhooks.push(webhook);
          if (webhooks.length >= BATCH) {
            await target.insertEndpoints(webhooks);
            report.webhooks += webhooks.length;
            webhooks = [];
          }
          break;
        }
        default:
          throw refused(
            line.number,
            typeof o.type === 'string'
              ? `unknown record type "${o.type}"`
              : 'a record without a "type" (plant, token, webhook or end)',
          );
      }
    }
    if (!end) {
      throw new RestoreRefusedError(`the backup is truncated: it ends at line ${lastLine}, without its end record`);
    }
    await flushPlants();
    await settle();
    await target.insertTokens(tokens);
    report.tokens += tokens.length;
    await target.insertEndpoints(webhooks);
    report.webhooks += webhooks.length;
    checkEnd(end, report, hash.digest('hex'));
    return report;
  });
}

function checkEnd(end: { line: number; record: Obj }, report: RestoreReport, sha256: string): void {
  const line = { number: end.line };
  members(line, 'the end record', end.record, ['type', 'plants', 'tokens', 'webhooks', 'sha256']);
  if (end.record.sha256 !== sha256) {
    throw refused(
      end.line,
      "the backup's checksum does not match its content: a line was changed, added or removed since it was written",
    );
  }
  for (const key of ['plants', 'tokens', 'webhooks'] as const) {
    if (count(line, end.record, key) !== report[key]) {
      throw refused(
        end.line,
        `the end record counts ${String(end.record[key])} ${key}, the backup holds ${report[key]}`,
      );
    }
  }
}
