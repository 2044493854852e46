import { StoreUnavailableError } from '../../domain/errors.js';
import type { BackupParts, RestoreTarget, StoreSnapshot } from '../backup.js';
import type { ChangeLog } from '../changes.js';
import type { StoreKind } from '../schema-versions.js';
import type { Store, StoreHealth } from '../store.js';
import type { TokenStore } from '../tokens.js';
import type { WebhookStore } from '../webhooks.js';
import { postgresRestore, postgresSnapshot } from './backup.js';
import { postgresChanges } from './changes.js';
import { postgresSettings } from './connection.js';
import { runMigrations } from './migrations.js';
import { plantsInBackup, PostgresPlants } from './plants.js';
import { PostgresPool } from './pool.js';
import type { Run } from './rows.js';
import { postgresTokens, tokensInBackup } from './tokens.js';
import { endpointsInBackup, postgresWebhooks } from './webhooks.js';

/** How each kind of record is kept in a backup of this store. */
export const POSTGRES_BACKUP: BackupParts<Run> = {
  tokens: tokensInBackup,
  webhooks: endpointsInBackup,
  plants: plantsInBackup,
};

/**
 * The tables no kind's part of a backup covers, and why: every other table of the store belongs
 * to one (test/store/backup.test.ts holds the schema to that).
 */
export const POSTGRES_NOT_BACKED_UP: Readonly<Record<string, string>> = {
  events: 'the change log, which the webhook outbox delivers from: a restored store starts a new one (README)',
  deliveries: 'the webhook outbox: deliveries under way are not part of a backup (README)',
  change_log: 'where the change log starts (see events)',
  schema_migrations: "the migrations' bookkeeping: a backup records its schema version in its header",
};

/**
 * The scale-out store: any number of instances share one PostgreSQL database. Every change is
 * one statement or one transaction, committed (and so durable, with PostgreSQL's default
 * synchronous_commit) before the promise resolves. Outages reject with StoreUnavailableError.
 */
export class PostgresStore implements Store {
  readonly kind: StoreKind = 'postgres';
  private readonly pool: PostgresPool;
  private readonly schema: string | undefined;
  readonly plants: PostgresPlants;
  readonly tokens: TokenStore;
  readonly webhooks: WebhookStore;
  readonly changes: ChangeLog;
  readonly notice = undefined;
  /** Its tables live in a database the operator made: nothing of it is ours to remove. */
  readonly files = undefined;

  private readonly mustExist: boolean;

  constructor(databaseUrl: string, poolSize: number, { mustExist = false }: { mustExist?: boolean } = {}) {
    const settings = postgresSettings(databaseUrl, poolSize);
    this.schema = settings.schema;
    this.mustExist = mustExist;
    const pool = new PostgresPool(settings);
    this.pool = pool;
    this.plants = new PostgresPlants(pool, poolSize);
    this.tokens = postgresTokens(pool.run, pool.lookUp);
    this.webhooks = postgresWebhooks(pool.run, (work) => pool.transaction(work));
    this.changes = postgresChanges(pool.run);
  }

  migrate(): Promise<number> {
    return this.pool.withClient((client) => runMigrations(client, this.schema, { mustExist: this.mustExist }));
  }

  /**
   * Reachable, and not a read-only standby (a failover left this instance pointing at one): names
   * the primary. With several hosts, a standby's answer has the hosts asked which one is the primary.
   */
  async ping(): Promise<StoreHealth> {
    const { primary } = this.pool;
    const host = primary.host;
    const asked = this.pool.run<{ standby: boolean }>({ text: 'SELECT pg_is_in_recovery() AS standby' });
    const [row] = await asked.catch((err: unknown) => {
      if (!primary.searching) throw err;
      throw new StoreUnavailableError(err, `looking for the primary among ${primary.hosts.join(', ')}`);
    });
    if (row?.standby) {
      primary.recheck();
      throw new StoreUnavailableError(undefined, `the database (${host}) is a read-only standby; writes fail`);
    }
    return host ? { primary: host } : {};
  }

  watchPrimary(listener: (primary: string, previous: string | undefined) => void): void {
    this.pool.primary.onChange(listener);
  }

  /** Operations waiting for a pooled connection or a batch: how far this instance has fallen behind. */
  pendingWrites(): number {
    return this.pool.waiting + this.plants.waiting;
  }

  writeStats(): { commits: number; writes: number } {
    return { ...this.plants.committed };
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  /** A connection of its own, held until the snapshot is closed. */
  async openSnapshot(): Promise<StoreSnapshot> {
    const client = await this.pool.connect();
    return postgresSnapshot(client, this.pool.begin, POSTGRES_BACKUP, (broken) => client.release(broken));
  }

  restoreInto<T>(work: (target: RestoreTarget) => Promise<T>): Promise<T> {
    return this.pool.withClient((client) => postgresRestore(client, this.pool.begin, POSTGRES_BACKUP, work));
  }
}
