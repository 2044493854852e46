import type { WebhookStore } from '../events/types.js';

/** A plant as stored. `tag` is undefined when the plant has no tag; `""` is a tag. */
export interface PlantRecord {
  id: bigint;
  name: string;
  tag?: string;
}

export type CreateOutcome = { kind: 'created' } | { kind: 'identical' } | { kind: 'conflict'; existing: PlantRecord };

export const SCOPES = ['plants:read', 'plants:write', 'metrics:read'] as const;
export type Scope = (typeof SCOPES)[number];

export interface TokenRecord {
  id: string;
  name: string;
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  hash: string;
  /** The first characters of the token, so a person can tell tokens apart. */
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** Raised by a store when its storage cannot be reached; the HTTP layer answers 503. */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the store is unavailable', { cause });
    this.name = 'StoreUnavailableError';
  }
}

/**
 * Everything the service keeps. Each method that changes data resolves only after the change
 * is durable, and is atomic on its own.
 */
export interface Store extends WebhookStore {
  /** Applies pending schema migrations; resolves to the number applied. */
  migrate(): Promise<number>;
  /** Rejects when the storage cannot be reached. */
  ping(): Promise<void>;
  /** Creates the plant unless its id exists: then reports whether the stored one is identical. */
  createPlant(plant: PlantRecord): Promise<CreateOutcome>;
  /** Many creations in one transaction (import); one outcome per plant, in order. */
  createPlants(plants: PlantRecord[]): Promise<CreateOutcome[]>;
  getPlant(id: bigint): Promise<PlantRecord | undefined>;
  /** Up to `limit` plants with an id greater than `after`, by id ascending; O(limit) whatever the store holds. */
  listPlants(after: bigint | undefined, limit: number): Promise<PlantRecord[]>;
  /** Replaces name and tag; resolves to false when no plant has this id. */
  replacePlant(plant: PlantRecord): Promise<boolean>;
  /** Resolves to the deleted plant, or undefined when there was none. */
  deletePlant(id: bigint): Promise<PlantRecord | undefined>;
  /** How many plants the store holds (for metrics; may take a few ms on millions). */
  countPlants(): Promise<number>;
  /**
   * Work accepted but not yet begun by the store: writes waiting for a commit (SQLite), operations
   * waiting for a pooled connection (PostgreSQL). How far it has fallen behind (overload bound).
   */
  pendingWrites?(): number;
  /** Group commit figures for stores that batch writes: commits so far and the writes they carried. */
  writeStats?(): { commits: number; writes: number };

  insertToken(token: TokenRecord): Promise<void>;
  findTokenByHash(hash: string): Promise<TokenRecord | undefined>;
  listTokens(): Promise<TokenRecord[]>;
  countTokens(): Promise<number>;
  /** Resolves to false when no token has this id. Revoking twice keeps the first time. */
  revokeToken(id: string, at: Date): Promise<boolean>;

  close(): Promise<void>;
}
