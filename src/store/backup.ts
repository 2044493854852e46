// The whole store, for a backup and a restore: a snapshot reads every kind of record a backup
// holds, a restore writes them, each kind through a part of its own. Each store says, for every
// kind, how it reads and writes it and which of its tables that covers (SQLITE_BACKUP in
// sqlite-store.ts, POSTGRES_BACKUP in postgres-store.ts, each part beside its kind), and names
// the tables no kind covers; a test holds every table of the schema to one or the other.
import type { PlantRecord } from '../domain/plant.js';
import type { TokenRecord } from '../domain/token.js';
import type { WebhookEndpoint } from '../domain/webhook.js';

/** The records a backup holds, by kind of record. Webhook deliveries (the outbox) are not part of it. */
export interface BackedUp {
  tokens: TokenRecord;
  webhooks: WebhookEndpoint;
  plants: PlantRecord;
}
export type RecordKind = keyof BackedUp;

/** One value for each kind of record. */
export type EachKind<F extends { [K in RecordKind]: unknown }> = { readonly [K in RecordKind]: F[K] };

/** One kind's records in a snapshot. */
export interface SnapshotPart<R> {
  /**
   * Every record of the kind in its backup order, a page at a time: memory stays flat for a kind
   * that can be large (plants).
   */
  pages(): AsyncIterable<R[]>;
}

/** One consistent view of the whole store (backup). */
export interface StoreSnapshot {
  /** The store's schema version (migrations applied), as of the snapshot. */
  readonly schemaVersion: number;
  readonly records: EachKind<{ [K in RecordKind]: SnapshotPart<BackedUp[K]> }>;
  /**
   * The change log's position as of the snapshot: every change up to it is in what the snapshot
   * shows, none past it (a stream's `snapshot=true` follows on from it).
   */
  position(): Promise<bigint>;
  /** Ends the transaction and lets go of its connection. */
  close(): Promise<void>;
}

/** One kind's writes inside a restore's transaction. */
export interface RestorePart<R> {
  /** How many the store holds, inside the transaction. */
  count(): Promise<number>;
  /**
   * Inserts records as they were stored (an endpoint with its state and its secret as given; a
   * plant through the write path's own insert), writing no outbox event; resolves to how many
   * it inserted: fewer when an id was taken.
   */
  insert(records: R[]): Promise<number>;
}

/** Writes inside a restore's transaction. */
export interface RestoreTarget {
  readonly records: EachKind<{ [K in RecordKind]: RestorePart<BackedUp[K]> }>;
}

/** Plants are read for a snapshot this many at a time. */
export const SNAPSHOT_PAGE = 5000;

/**
 * How one store keeps one kind of record in a backup, on its connection `C`: reads it for a
 * snapshot, writes it in a restore, and which of its tables that covers.
 */
export interface RecordsInBackup<R, C> {
  /**
   * The tables of the kind that a backup covers: those that hold its records, and those a
   * restore makes again from them (a search index).
   */
  readonly tables: readonly string[];
  snapshot(on: C): SnapshotPart<R>;
  /** Its part of a restore; once every record is in, `done` finishes what the kind keeps beside them. */
  restore(on: C): RestorePart<R> & { done?(): Promise<void> };
}

/** How one store keeps every kind of record in a backup. */
export type BackupParts<C> = EachKind<{ [K in RecordKind]: RecordsInBackup<BackedUp[K], C> }>;

/** A restore's part of one kind, as a store gives it. */
type RestoringPart<R> = ReturnType<RecordsInBackup<R, unknown>['restore']>;

/** One value per kind of record, made by `make` from each kind's part, in the parts' order. */
function perKind<P extends object, T>(parts: P, make: (kind: keyof P & RecordKind) => unknown): T {
  const kinds = Object.keys(parts) as (keyof P & RecordKind)[];
  // TypeScript types a read of a mapped type by a generic key, not a write: each value is made by
  // the same call on its own kind's part, so the map the caller names is the one built here.
  return Object.fromEntries(kinds.map((kind): [RecordKind, unknown] => [kind, make(kind)])) as T;
}

/** Each kind's part of a snapshot on `on`, through `wrap` (how the store handles its failures). */
export function snapshotParts<C>(
  parts: BackupParts<C>,
  on: C,
  wrap: <R>(part: SnapshotPart<R>) => SnapshotPart<R>,
): StoreSnapshot['records'] {
  return perKind(parts, <K extends RecordKind>(kind: K) => wrap(parts[kind].snapshot(on)));
}

/** Each kind's part of a restore on `on`, made in the parts' order. */
export function restoreParts<C>(
  parts: BackupParts<C>,
  on: C,
): EachKind<{ [K in RecordKind]: RestoringPart<BackedUp[K]> }> {
  return perKind(parts, <K extends RecordKind>(kind: K) => parts[kind].restore(on));
}
