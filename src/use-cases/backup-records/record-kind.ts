import type { ErrorObject } from 'ajv/dist/2020.js';
import type { WebhookConfig } from '../../config/config.js';
import type { ApiDocument } from '../../openapi/document.js';
import type { BackedUp, RecordKind } from '../../store/backup.js';

/** A line's JSON object, as the exact reader gave it. */
export type JsonObject = Record<string, unknown>;

/** What a record of a backup file holds that cannot be restored: said after "line N: ". */
export class RecordProblem extends Error {
  override name = 'RecordProblem';
}

/** What a restore tells the operator of its webhook secrets. */
export interface SecretCounts {
  /** Endpoint secrets sealed with a WEBHOOK_SECRET_KEY, and how many of them the key given cannot open. */
  sealedSecrets: number;
  unopenedSecrets: number;
}

/** What the readers of one restore work with: the target's settings, and what they report. */
export interface RestoreContext {
  doc: ApiDocument;
  config: Pick<WebhookConfig, 'webhookAllowPrivate' | 'webhookSecretKey'>;
  report: SecretCounts;
}

/** One kind of record in a backup file: how its records are written there, and read back. */
export interface BackupRecords<K extends RecordKind> {
  /** Which of the store's kinds: whose part of a snapshot and of a restore, and its count's name. */
  readonly kind: K;
  /** The "type" of its lines. */
  readonly type: string;
  /** One of them, as the reports name it ("1 webhook endpoint"). */
  readonly noun: string;
  /** One record as its line, without the newline. */
  line(record: BackedUp[K]): string;
  /**
   * For one restore, the reader of this type's lines: the record a line's object holds, or a
   * RecordProblem. It remembers what it has read (no id twice, an order kept).
   */
  reader(context: RestoreContext): Promise<(line: JsonObject) => BackedUp[K]>;
}

/** A time as a backup writes it, and Date#toISOString writes it: 2025-01-31T12:00:00.000Z. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isInstant = (text: string) => INSTANT.test(text) && new Date(text).toISOString() === text;

/** A time, in a record's JSON Schema. */
export const TIME = { type: 'string', format: 'instant', description: 'a time like 2025-01-31T12:00:00.000Z' } as const;
/** A time or null. */
export const TIME_OR_NULL = {
  anyOf: [TIME, { type: 'null' }],
  description: `${TIME.description}, or null`,
} as const;

/**
 * The JSON Schema of a record's line `T`: an object of exactly its members, each with the
 * description of the values it takes, which the messages give ("a token's "scopes" must be a list
 * of strings").
 */
export interface RecordSchema<T> {
  type: 'object';
  properties: { [K in keyof T]-?: { description?: string; [keyword: string]: unknown } };
  required: (keyof T & string)[];
  additionalProperties: false;
}

/** "a token's" */
const owner = (what: string) => `${what}'s`;

/** The first error of a record's check, in the words of the backup's other refusals. */
function problemOf<T>(e: ErrorObject, schema: RecordSchema<T>, what: string): string {
  const p = e.params as { additionalProperty?: string; missingProperty?: string };
  if (e.keyword === 'additionalProperties') return `unknown field "${p.additionalProperty}" in ${what}`;
  if (e.keyword === 'required') return `${what} has no "${p.missingProperty}"`;
  const field = e.instancePath.split('/')[1] ?? '';
  const description = (schema.properties as Record<string, { description?: string } | undefined>)[field]?.description;
  return `${owner(what)} "${field}" must be ${description ?? 'as a backup writes it'}`;
}

/**
 * Compiles a record's schema with the Ajv every request part is checked with (loaded here, when a
 * restore runs, not by every command that starts). The check gives the line, typed, or throws a
 * RecordProblem naming the field, in the backup's words.
 */
export async function recordCheck<T>(schema: RecordSchema<T>, what: string): Promise<(line: JsonObject) => T> {
  const { createAjv } = await import('../../openapi/validation.js');
  const ajv = createAjv().addFormat('instant', { type: 'string', validate: isInstant });
  const validate = ajv.compile(schema);
  return (line) => {
    if (!validate(line)) throw new RecordProblem(problemOf(validate.errors![0]!, schema, what));
    // The schema names each member of T and the values it takes, beside T's declaration.
    return line as T;
  };
}
