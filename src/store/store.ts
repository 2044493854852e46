import type { PlantRecord } from '../domain/plant.js';
import type { TokenRecord } from '../domain/token.js';
import type { WebhookEndpoint } from '../domain/webhook.js';
import type { PlantStore } from './plants.js';
import type { StoreKind } from './schema-versions.js';
import type { TokenStore } from './tokens.js';
import type { WebhookStore } from './webhooks.js';

/**
 * Everything the service keeps. Each method that changes data resolves only after the change
 * is durable, and is atomic on its own. Outages reject with the domain's StoreUnavailableError.
 */
export interface Store {
  /** Applies pending schema migrations; resolves to the number applied. */
  migrate(): Promise<number>;
  /** Rejects when the storage cannot be reached, or cannot take writes (a full disk, a read-only standby). */
  ping(): Promise<void>;
  /** A line about the state the store was opened in, for the operator, when something is off. */
  readonly notice?: string | undefined;
  readonly plants: PlantStore;
  /**
   * Work accepted but not yet begun by the store: writes waiting for a commit (SQLite), operations
   * waiting for a pooled connection (PostgreSQL). How far it has fallen behind (overload bound).
   */
  pendingWrites?(): number;
  /** Group commit figures for stores that batch writes: fsyncs so far and the writes they made durable. */
  writeStats?(): { commits: number; writes: number };

  readonly tokens: TokenStore;
  readonly webhooks: WebhookStore;

  close(): Promise<void>;
  /**
   * Closes the store and removes it if opening it created it and it still holds nothing, so that
   * a command that failed (a refused restore) leaves nothing behind. Only stores kept in files of
   * their own have it: SQLite's file, its -wal and -shm, and the directory made for it.
   */
  discardIfNew?(): Promise<void>;

  /** Which kind of store this is: its schema versions are numbered per kind. */
  readonly kind: StoreKind;
  /**
   * The whole store as it is at one moment, read in one transaction of its own (a backup): later
   * writes, by this process or any other, are not seen. Close it when done.
   */
  openSnapshot(): Promise<StoreSnapshot>;
  /**
   * Runs `work` in one transaction that other writers cannot interleave with (a restore): commits
   * when `work` resolves, changes nothing when it rejects. Writes no outbox events.
   */
  restoreInto<T>(work: (target: RestoreTarget) => Promise<T>): Promise<T>;
}

/** One consistent view of the whole store (backup). Webhook deliveries are not part of it. */
export interface StoreSnapshot {
  /** The store's schema version (migrations applied), as of the snapshot. */
  readonly schemaVersion: number;
  tokens(): Promise<TokenRecord[]>;
  /** Every webhook endpoint, its secret as stored (sealed when WEBHOOK_SECRET_KEY was set). */
  endpoints(): Promise<WebhookEndpoint[]>;
  /** Up to `limit` plants with an id greater than `after`, by id ascending. */
  plants(after: bigint | undefined, limit: number): Promise<PlantRecord[]>;
  /** Ends the transaction and lets go of its connection. */
  close(): Promise<void>;
}

/** Writes inside a restore's transaction. */
export interface RestoreTarget {
  /** What the store holds, inside the transaction. */
  counts(): Promise<{ plants: number; tokens: number; endpoints: number }>;
  insertTokens(tokens: TokenRecord[]): Promise<void>;
  /** Endpoints with their state (enabled or not, and why) and their secrets as given. */
  insertEndpoints(endpoints: WebhookEndpoint[]): Promise<void>;
  /** Inserts plants whose ids are free, with the write path's own insert; resolves to how many it inserted. */
  insertPlants(plants: PlantRecord[]): Promise<number>;
}
