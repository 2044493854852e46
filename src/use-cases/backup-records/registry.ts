import type { RecordKind } from '../../store/backup.js';
import { plantRecords } from './plants.js';
import type { BackupRecords } from './record-kind.js';
import { tokenRecords } from './tokens.js';
import { webhookRecords } from './webhooks.js';

/**
 * What a backup holds: every kind of record, in the order of the file's lines. Backup and restore
 * loop over it; test/store/backup.test.ts fails when a table of the store belongs to none of
 * these kinds and is not named as left out.
 */
export const BACKUP_RECORDS: readonly { [K in RecordKind]: BackupRecords<K> }[RecordKind][] = [
  tokenRecords,
  webhookRecords,
  plantRecords,
];

/** How many records of each kind. */
export type RecordCounts = Record<RecordKind, number>;

/** No record of any kind. */
export const noRecords = (): RecordCounts => Object.fromEntries(BACKUP_RECORDS.map((r) => [r.kind, 0])) as RecordCounts;

/**
 * The kinds in the order their counts are written, in the end record and in messages: by name
 * (plants, tokens, webhooks), as version 1 of the format wrote them.
 */
export const COUNTED: readonly (typeof BACKUP_RECORDS)[number][] = [...BACKUP_RECORDS].sort((a, b) =>
  a.kind < b.kind ? -1 : 1,
);

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** "4 plants, 3 tokens, 1 webhook endpoint" */
export function describeCounts(counts: RecordCounts): string {
  return COUNTED.map((r) => plural(counts[r.kind], r.noun)).join(', ');
}

/** "plants, tokens, webhook endpoints": what a backup holds, as `backup --help` says it. */
export function kindsHeld(): string {
  return COUNTED.map((r) => `${r.noun}s`).join(', ');
}
