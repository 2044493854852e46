import { StoreMissingError, StoreUnavailableError } from '../../domain/errors.js';
import type { Tracing } from '../../tracing/tracing.js';
import type { BackupParts, RestoreTarget, StoreSnapshot } from '../backup.js';
import type { ChangeLog } from '../changes.js';
import type { StoreKind } from '../schema-versions.js';
import type { ReadHost, StandbyChange, Store, StoreHealth, StoreReads } from '../store.js';
import type { TokenStore } from '../tokens.js';
import type { WebhookStore } from '../webhooks.js';
import { postgresRestore, postgresSnapshot } from './backup.js';
import { postgresChanges } from './changes.js';
import { postgresSettings } from './connection.js';
import { runMigrations } from './migrations.js';
import { plantsInBackup, PostgresPlants } from './plants.js';
import { PostgresPool } from './pool.js';
import { parseHosts } from './hosts.js';
import { Standbys } from './replicas.js';
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
  changes: 'the change log, which the webhook outbox delivers from: a restored store starts a new one (the manual)',
  deliveries: 'the webhook outbox: deliveries under way are not part of a backup (the manual)',
  change_floor: 'where the change log starts (see changes)',
  stream_tickets: "stream tickets: five minutes' credentials, made again by the pages that need them",
  schema_migrations: "the migrations' bookkeeping: a backup records its schema version in its header",
};

/** DATABASE_READ_URL and DATABASE_READ_MAX_LAG, for a store that serves (replicas.ts). */
export interface StandbySettings {
  url: string;
  maxLagMs: number;
}

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
  /** The reads the primary serves, and how many were sent to it. */
  private readonly primaryReads: StoreReads;
  private readonly primaryHost: string;
  private readsOnPrimary = 0;
  private readonly standbys: Standbys | undefined;

  constructor(
    databaseUrl: string,
    poolSize: number,
    {
      mustExist = false,
      standbys,
      tracing,
    }: { mustExist?: boolean; standbys?: StandbySettings; tracing?: Tracing } = {},
  ) {
    const settings = postgresSettings(databaseUrl, poolSize);
    this.schema = settings.schema;
    this.mustExist = mustExist;
    const pool = new PostgresPool(settings, tracing);
    this.pool = pool;
    this.plants = new PostgresPlants(pool, poolSize, tracing);
    this.tokens = postgresTokens(pool.run, pool.lookUp);
    this.webhooks = postgresWebhooks(pool.run, (work) => pool.transaction(work));
    this.changes = {
      ...postgresChanges(pool.run),
      // The first primary found (at start) is no change of history; each one after it is.
      onReplaced: (listener) => pool.primary.onChange((_, previous) => previous !== undefined && listener()),
      onWritten: (listener) => this.plants.acknowledged.listen(listener),
    };
    this.primaryReads = { plants: this.plants.reads, changes: this.changes };
    // Where writes go: the host of DATABASE_URL, or its list when it names several (failover).
    this.primaryHost = parseHosts(databaseUrl)
      .map((h) => h.name)
      .join(',');
    if (standbys) this.standbys = this.openStandbys(standbys, poolSize);
  }

  /** A pool per standby, on the primary's schema; their positions are looked at from now on. */
  private openStandbys({ url, maxLagMs }: StandbySettings, poolSize: number): Standbys {
    const hosts = parseHosts(url, 'DATABASE_READ_URL').map(({ name, url: hostUrl }) => {
      const own = new URL(hostUrl);
      if (this.schema !== undefined && !own.searchParams.has('schema')) own.searchParams.set('schema', this.schema);
      return { host: name, settings: postgresSettings(own.toString(), poolSize) };
    });
    const standbys = new Standbys(hosts, poolSize, maxLagMs, {
      reads: this.primaryReads,
      run: this.pool.run,
      tookOver: () => this.readsOnPrimary++,
    });
    standbys.start();
    return standbys;
  }

  async reads(atLeast?: bigint): Promise<StoreReads> {
    const standby = await this.standbys?.choose(atLeast);
    if (standby) return standby;
    this.readsOnPrimary++;
    return this.primaryReads;
  }

  readHosts(): ReadHost[] {
    // With several hosts, the one found to be the primary (the list until one is).
    const host = this.pool.primary.host ?? this.primaryHost;
    const primary: ReadHost = { host, role: 'primary', reads: this.readsOnPrimary };
    const standbys = this.standbys?.stats() ?? [];
    return [primary, ...standbys.map((s): ReadHost => ({ ...s, role: 'standby' }))];
  }

  migrate(): Promise<number> {
    return this.pool
      .withClient((client) => runMigrations(client, this.schema, { mustExist: this.mustExist }))
      .catch((err: unknown) => {
        // 3D000, invalid_catalog_name: the URL's database does not exist. To a command that needs
        // a store, that is no store, said with the URL like a missing schema (migrate creates
        // neither a database nor, here, anything else).
        if (this.mustExist && (err as { code?: unknown } | null)?.code === '3D000') {
          throw new StoreMissingError(`the ${(err as Error).message} (create it first: CREATE DATABASE)`);
        }
        throw err;
      });
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

  watchStandbys(listener: (change: StandbyChange) => void): void {
    this.standbys?.onChange(listener);
  }

  /** Operations waiting for a pooled connection or a batch: how far this instance has fallen behind. */
  pendingWrites(): number {
    return this.pool.waiting + this.plants.waiting;
  }

  writeStats(): { commits: number; writes: number } {
    return { ...this.plants.committed };
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.standbys?.close()]);
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
