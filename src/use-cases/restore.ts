import { createHash, type Hash } from 'node:crypto';
import type { WebhookConfig } from '../config/config.js';
import { ConflictError, InvalidInputError } from '../domain/errors.js';
import { atLine, readNdjson, type NdjsonEntry } from '../json/ndjson.js';
import { InexactNumber } from '../json/read-json.js';
import type { ApiDocument } from '../openapi/document.js';
import type { BackedUp, RecordKind, RestorePart, RestoreTarget } from '../store/backup.js';
import { KNOWN_SCHEMA_VERSIONS, STORE_KINDS, type StoreKind } from '../store/schema-versions.js';
import type { Store } from '../store/store.js';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, type BackupCounts, type BackupHeader } from './backup.js';
import { RecordProblem, type BackupRecords, type JsonObject, type SecretCounts } from './backup-records/record-kind.js';
import { BACKUP_RECORDS, COUNTED, describeCounts, noRecords, type RecordCounts } from './backup-records/registry.js';

/** A backup that cannot be restored: nothing was applied. */
export class RestoreRefusedError extends InvalidInputError {
  override name = 'RestoreRefusedError';
}

/** The target store holds something: a restore goes into an empty store only, and changed nothing. */
export class StoreNotEmptyError extends ConflictError {
  override name = 'StoreNotEmptyError';
}

export type RestoreReport = BackupCounts & SecretCounts & { header: BackupHeader };

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

/**
 * One kind's records in a restore: each line read by its reader, and inserted a batch at a time.
 * A batch is inserted while the next is read: the store's work and the reading overlap.
 */
function section<K extends RecordKind>(
  records: BackupRecords<K>,
  read: (line: JsonObject) => BackedUp[K],
  part: RestorePart<BackedUp[K]>,
  counts: RecordCounts,
) {
  let batch: BackedUp[K][] = [];
  let inserting: Promise<unknown> = Promise.resolve();
  let failure: { error: unknown } | undefined;
  const settle = async () => {
    await inserting;
    if (failure) throw failure.error;
  };
  const flush = async () => {
    await settle();
    if (batch.length === 0) return;
    const these = batch;
    batch = [];
    inserting = part.insert(these).then(
      (inserted) => {
        if (inserted !== these.length)
          failure ??= { error: new Error(`a restored ${records.noun} was already in the store`) };
        else counts[records.kind] += these.length;
      },
      (error: unknown) => void (failure ??= { error }),
    );
  };
  return {
    async add(line: JsonObject): Promise<void> {
      batch.push(read(line));
      if (batch.length >= BATCH) await flush();
    },
    /** The last batch in, and every batch's outcome known. */
    async finish(): Promise<void> {
      await flush();
      await settle();
    },
  };
}

/**
 * Restores a backup (see backup.ts) into an empty store, whole or not at all: the records go in
 * through one transaction (store.restoreInto), and any refusal (a malformed line, an unknown
 * record, a record the commands or the API would refuse, a truncated or altered file) rolls it
 * back. The input is read as it comes, by the NDJSON reader of `import` (json/ndjson.ts), so
 * memory stays flat; plants emit no webhook events. Each
 * kind of record of the registry (backup-records/registry.ts) is read by its own reader, under
 * the target's settings: whether private addresses are allowed, and the WEBHOOK_SECRET_KEY that
 * should open sealed secrets.
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
  const report: RestoreReport = { header, ...noRecords(), sealedSecrets: 0, unopenedSecrets: 0 };
  const context = { doc, config, report };
  const readers = await Promise.all(BACKUP_RECORDS.map((records) => records.reader(context)));

  return store.restoreInto(async (target: RestoreTarget) => {
    const held = noRecords();
    for (const records of BACKUP_RECORDS) held[records.kind] = await target.records[records.kind].count();
    if (Object.values(held).some((n) => n > 0)) {
      throw new StoreNotEmptyError(
        `the store is not empty (${describeCounts(held)}): restore goes into an empty store only; nothing was changed`,
      );
    }
    const sections = new Map(
      BACKUP_RECORDS.map((records, i) => [
        records.type,
        section(records, readers[i]!, target.records[records.kind], report),
      ]),
    );
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
      const records = typeof o.type === 'string' ? sections.get(o.type) : undefined;
      if (!records) {
        throw refused(
          line.number,
          typeof o.type === 'string'
            ? `unknown record type "${o.type}"`
            : `a record without a "type" (${COUNTED.map((r) => r.type).join(', ')} or end)`,
        );
      }
      try {
        await records.add(o);
      } catch (err) {
        throw err instanceof RecordProblem ? refused(line.number, err.message) : err;
      }
    }
    if (!end) {
      throw new RestoreRefusedError(`the backup is truncated: it ends at line ${lastLine}, without its end record`);
    }
    for (const records of sections.values()) await records.finish();
    checkEnd(end, report, hash.digest('hex'));
    return report;
  });
}

function checkEnd(end: { line: number; record: Obj }, report: RestoreReport, sha256: string): void {
  const line = { number: end.line };
  const counted = COUNTED.map((r) => r.kind);
  members(line, 'the end record', end.record, ['type', ...counted, 'sha256']);
  if (end.record.sha256 !== sha256) {
    throw refused(
      end.line,
      "the backup's checksum does not match its content: a line was changed, added or removed since it was written",
    );
  }
  for (const key of counted) {
    if (count(line, end.record, key) !== report[key]) {
      throw refused(
        end.line,
        `the end record counts ${String(end.record[key])} ${key}, the backup holds ${report[key]}`,
      );
    }
  }
}
