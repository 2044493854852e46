import { createHash } from 'node:crypto';
import { writeJson } from '../json/write-json.js';
import type { BackedUp, RecordKind, SnapshotPart } from '../store/backup.js';
import type { StoreKind } from '../store/schema-versions.js';
import type { Store } from '../store/store.js';
import type { BackupRecords } from './backup-records/record-kind.js';
import { BACKUP_RECORDS, COUNTED, noRecords, type RecordCounts } from './backup-records/registry.js';

// The whole-store backup file (the manual, "Backup and restore"): NDJSON, one typed record a line,
// each kind of record written as its entry in backup-records/ says.
//
//   {"format":"plant-store-backup","version":1,"plantStore":"0.2.0","store":"sqlite","schema":2,"takenAt":"…"}
//   {"type":"token","id":…,"name":…,"hash":…,"prefix":…,"scopes":[…],"createdAt":…,"expiresAt":…,"revokedAt":…}
//   {"type":"webhook","id":…,"url":…,"events":[…],"secret":…,"enabled":…,"disabledReason":…,"createdAt":…}
//   {"type":"plant","id":9223372036854775807,"name":…,"tag":…}          by id ascending, ids exact
//   {"type":"end","plants":N,"tokens":N,"webhooks":N,"sha256":"<hex of every byte before this line>"}

export const BACKUP_FORMAT = 'plant-store-backup';
/** The version of the layout above; a restore refuses any other. */
export const BACKUP_FORMAT_VERSION = 1;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: number;
  /** The plant-store version that wrote it. */
  plantStore: string;
  /** The kind of store it was taken from, and that store's schema version. */
  store: StoreKind;
  schema: number;
  /** When the snapshot was taken (ISO 8601, UTC). */
  takenAt: string;
}

/** How many records of each kind a backup holds: its end record's counts. */
export type BackupCounts = RecordCounts;

/** One kind's records in the snapshot, as lines: a chunk of whole lines a page. */
async function* linesOf<K extends RecordKind>(
  records: BackupRecords<K>,
  part: SnapshotPart<BackedUp[K]>,
  counts: BackupCounts,
): AsyncGenerator<string> {
  for await (const page of part.pages()) {
    counts[records.kind] += page.length;
    // One chunk a page: a million plants are two hundred writes, not a million.
    let chunk = '';
    for (const record of page) chunk += `${records.line(record)}\n`;
    yield chunk;
  }
}

/**
 * The whole store, as of one moment, as the lines of a backup file: each kind of record of the
 * registry (backup-records/registry.ts) in turn. The store is read in one snapshot
 * (store.openSnapshot) that the server's writes, in this process or another, do not disturb; a
 * page at a time, so memory stays flat whatever the store holds. The outbox of webhook deliveries
 * is not part of it. Each chunk ends with a newline.
 */
export async function* backupStore(
  store: Store,
  plantStoreVersion: string,
): AsyncGenerator<string, BackupCounts & { header: BackupHeader }> {
  const snapshot = await store.openSnapshot();
  try {
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_FORMAT_VERSION,
      plantStore: plantStoreVersion,
      store: store.kind,
      schema: snapshot.schemaVersion,
      takenAt: new Date().toISOString(),
    };
    const hash = createHash('sha256');
    const counts = noRecords();
    const hashed = (text: string) => {
      hash.update(text, 'utf8');
      return text;
    };
    yield hashed(`${writeJson(header)}\n`);
    for (const records of BACKUP_RECORDS) {
      for await (const chunk of linesOf(records, snapshot.records[records.kind], counts)) yield hashed(chunk);
    }
    await snapshot.close();
    yield `${endLine(counts, hash.digest('hex'))}\n`;
    return { ...counts, header };
  } finally {
    await snapshot.close();
  }
}

/** The end record: the counts, in their order, and the SHA-256 of every byte before it. */
export function endLine(counts: BackupCounts, sha256: string): string {
  return writeJson({ type: 'end', ...Object.fromEntries(COUNTED.map((r) => [r.kind, counts[r.kind]])), sha256 });
}
