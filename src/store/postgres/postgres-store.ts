import { Pool, type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { PlantRecord } from '../../domain/plant.js';
import type { PlantListQuery } from '../../domain/plant-query.js';
import type { PlantWrite, WriteOutcome } from '../../domain/plant-write.js';
import type { StoreKind } from '../schema-versions.js';
import type { RestoreTarget, Store, StoreSnapshot } from '../store.js';
import type { TokenStore } from '../tokens.js';
import type { WebhookStore } from '../webhooks.js';
import { applyWrites } from '../write-path.js';
import { postgresRestore, postgresSnapshot } from './backup.js';
import { Batcher } from './batcher.js';
import { OPERATION_BUDGET_MS, postgresSettings, TOKEN_LOOKUP_BUDGET_MS } from './connection.js';
import { isUnavailable, storeError } from './errors.js';
import { MIGRATION_TIMEOUT_MS, runMigrations } from './migrations.js';
import { listFiltered } from './plant-filters.js';
import { postgresPlantTx } from './plant-tx.js';
import { plantFromRow, SQL, type PlantRow, type Run, type Statements } from './rows.js';
import { postgresTokens } from './tokens.js';
import { postgresWebhooks } from './webhooks.js';
import { inline } from './inline.js';

/**
 * Most batches of plant writes under way at once, each on its own connection: the rest of the
 * pool stays free for reads, token look-ups and the dispatcher. One: since a batch takes two
 * round trips, one connection keeps up, and the writes that arrive meanwhile make the next batch
 * larger, which costs PostgreSQL less per write (about 50-65 against 80-120 us of its CPU per
 * POST; POST faster in 8 of 10 interleaved pairs, docs/performance.md). At four round trips a
 * batch, one ran no faster than two, and four or eight ran slower.
 */
const WRITE_CONNECTIONS = 1;

/**
 * Most statements of reads by id under way at once: concurrent reads of one plant each share one
 * statement, as writes share a batch, instead of a round trip and a statement apiece.
 */
const READ_CONNECTIONS = 2;

/** Milliseconds to `deadline`, at least 1 (0 would turn PostgreSQL's statement time-out off). */
function remaining(deadline: number): number {
  return Math.max(1, Math.ceil(deadline - Date.now()));
}

/** A deadlock or a serialization failure: the transaction may simply be run again. */
function conflicted(err: unknown): boolean {
  const code = ((err instanceof StoreUnavailableError ? err.cause : err) as { code?: unknown } | undefined)?.code;
  return code === '40P01' || code === '40001';
}

interface Queryable {
  query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>>;
}

/** Past its budget an operation is answered 503, whatever its statement is still doing. */
const late = (budgetMs = OPERATION_BUDGET_MS) =>
  new StoreUnavailableError(new Error(`no answer from the database in ${budgetMs} ms`));

/**
 * Statements on `q`; with `budgetMs`, each is answered `late()` once its budget is spent (a wait
 * for a pooled connection included), while the server cancels it at its statement time-out.
 */
function runOn(q: Queryable, budgetMs?: number): Run {
  return async <R extends QueryResultRow>(query: QueryConfig) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const rows = q.query<R>(query).then((r) => r.rows);
      if (budgetMs === undefined) return await rows;
      const overdue = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(late(budgetMs)), budgetMs)));
      return await Promise.race([rows, overdue]);
    } catch (err) {
      throw storeError(err);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The scale-out store: any number of instances share one PostgreSQL database. Every change is
 * one statement or one transaction, committed (and so durable, with PostgreSQL's default
 * synchronous_commit) before the promise resolves. Outages reject with StoreUnavailableError.
 */
export class PostgresStore implements Store {
  private readonly pool: Pool;
  private readonly schema: string | undefined;
  private readonly run: Run;
  readonly tokens: TokenStore;
  readonly webhooks: WebhookStore;
  private readonly writes: Batcher<PlantWrite, WriteOutcome>;
  private readonly reads: Batcher<bigint, PlantRecord | undefined>;

  constructor(databaseUrl: string, poolSize: number) {
    const settings = postgresSettings(databaseUrl, poolSize);
    this.schema = settings.schema;
    this.pool = new Pool(settings.pool);
    this.run = runOn(this.pool, OPERATION_BUDGET_MS);
    this.tokens = postgresTokens(this.run, runOn(this.pool, TOKEN_LOOKUP_BUDGET_MS));
    this.webhooks = postgresWebhooks(this.run, (work) => this.transaction(work));
    const budget = { ms: OPERATION_BUDGET_MS, late };
    this.writes = new Batcher(
      (batch, timeoutMs) => this.writeBatch(batch, Date.now() + timeoutMs),
      Math.min(WRITE_CONNECTIONS, poolSize),
      budget,
    );
    this.reads = new Batcher((ids) => this.readBatch(ids), Math.min(READ_CONNECTIONS, poolSize), budget);
    // An idle connection that breaks (database restart, network cut) is dropped by the pool;
    // without a listener the 'error' event would end the process.
    this.pool.on('error', () => undefined);
    // The same event on a checked-out connection between two statements of a transaction.
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  /** One connection for `work`; one that failed is closed (which rolls back), never reused. */
  private async withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((err: unknown) => Promise.reject(storeError(err)));
    try {
      const result = await work(client);
      client.release();
      return result;
    } catch (err) {
      client.release(true);
      throw storeError(err);
    }
  }

  /** `work` in one transaction on one connection. */
  private transaction<T>(work: (run: Run) => Promise<T>): Promise<T> {
    return this.withClient(async (client) => {
      const run = runOn(client);
      await run({ text: 'BEGIN' });
      const result = await work(run);
      await run({ text: 'COMMIT' });
      return result;
    });
  }

  /**
   * `work` in one transaction, in as few round trips as its statements allow. Each round trip
   * is one simple-protocol query of several statements, their parameters written in as literals
   * (inline.ts): BEGIN goes with the first statement, and statements whose result no one reads
   * are held for the next round trip, the last one with the COMMIT. A batch of creations is two
   * round trips (BEGIN, lock and insert; COMMIT), a batch of replaces or deletes two (BEGIN and
   * lock; the change and COMMIT). Under write load each round trip of a batch waits its turn on
   * a busy event loop: with BEGIN sent with the lock, POST ran 1.1-1.65x faster in nine
   * interleaved pairs, and with the insert sent with the lock and the rest with the COMMIT,
   * faster in six of seven more (docs/performance.md).
   */
  private batchTransaction<T>(work: (statements: Statements) => Promise<T>, deadline?: number): Promise<T> {
    return this.withClient(async (client) => {
      // A batch with a deadline has the server cancel it there (a lock it waits for included);
      // SET LOCAL lasts for this transaction only, so nothing stays in the session.
      const timeout = deadline === undefined ? [] : [`SET LOCAL statement_timeout = ${remaining(deadline)}`];
      let open = false;
      const held: QueryConfig[] = [];
      const send = async (queries: QueryConfig[]): Promise<QueryResultRow[][]> => {
        const texts = [...(open ? [] : ['BEGIN', ...timeout]), ...held.splice(0).map(inline), ...queries.map(inline)];
        open = true;
        const results = (await client.query(texts.join(';\n'))) as unknown as QueryResult | QueryResult[];
        return (Array.isArray(results) ? results : [results]).slice(texts.length - queries.length).map((r) => r.rows);
      };
      const result = await work({ together: send, later: async (query) => void held.push(query) });
      if (open || held.length) await send([{ text: 'COMMIT' }]);
      return result;
    });
  }

  /** Operations waiting for a pooled connection or a batch: how far this instance has fallen behind. */
  pendingWrites(): number {
    return this.pool.waitingCount + this.writes.waiting + this.reads.waiting;
  }

  /** Write transactions committed, and the plant writes they carried. */
  private committed = { commits: 0, writes: 0 };

  writeStats(): { commits: number; writes: number } {
    return { ...this.committed };
  }

  /** One transaction of plant writes, counted once committed. */
  private async commitWrites(writes: PlantWrite[], deadline?: number): Promise<WriteOutcome[]> {
    const outcomes = await this.batchTransaction(
      (statements) => applyWrites(writes, postgresPlantTx(statements)),
      deadline,
    );
    this.committed.commits++;
    this.committed.writes += writes.length;
    return outcomes;
  }

  /**
   * One transaction for a batch of concurrent writes, each step one statement for all of them.
   * If the batch fails for another reason than an outage, its halves are tried again, one after
   * the other (so writes of one id keep their order), down to the write that cannot be made: it
   * fails alone, after a few transactions rather than one per write.
   */
  private async writeBatch(batch: PlantWrite[], deadline: number): Promise<PromiseSettledResult<WriteOutcome>[]> {
    try {
      const outcomes = await this.commitWrites(batch, deadline).catch((err: unknown) =>
        // Another instance's batch locked the same plants in another order: once more.
        conflicted(err) ? this.commitWrites(batch, deadline) : Promise.reject(err),
      );
      return outcomes.map((value) => ({ status: 'fulfilled', value }));
    } catch (err) {
      if (err instanceof StoreUnavailableError || isUnavailable(err)) throw err;
      if (batch.length === 1) return [{ status: 'rejected', reason: err }];
      const half = Math.ceil(batch.length / 2);
      return [
        ...(await this.writeBatch(batch.slice(0, half), deadline)),
        ...(await this.writeBatch(batch.slice(half), deadline)),
      ];
    }
  }

  migrate(): Promise<number> {
    return this.withClient((client) => runMigrations(client, this.schema));
  }

  /** Reachable, and not a read-only standby (a failover left this instance pointing at one). */
  async ping(): Promise<void> {
    const [row] = await this.run<{ standby: boolean }>({ text: 'SELECT pg_is_in_recovery() AS standby' });
    if (row?.standby) throw new StoreUnavailableError(undefined, 'the database is a read-only standby; writes fail');
  }

  writePlant(write: PlantWrite): Promise<WriteOutcome> {
    return this.writes.submit(write);
  }

  writePlants(writes: PlantWrite[]): Promise<WriteOutcome[]> {
    return this.commitWrites(writes);
  }

  getPlant(id: bigint): Promise<PlantRecord | undefined> {
    return this.reads.submit(id);
  }

  /**
   * The plants of reads by id that came together, in one statement. It starts after each of them
   * arrived, so each sees every write acknowledged before it.
   */
  private async readBatch(ids: bigint[]): Promise<PromiseSettledResult<PlantRecord | undefined>[]> {
    const rows = await this.run<PlantRow>({ ...SQL.getPlants, values: [ids.map(String)] });
    const found = new Map(rows.map((row) => [BigInt(row.id), plantFromRow(row)]));
    return ids.map((id) => ({ status: 'fulfilled', value: found.get(id) }));
  }

  async listPlants(filter: PlantListQuery, limit: number): Promise<PlantRecord[]> {
    const filtered = await listFiltered(this.run, filter, limit);
    if (filtered) return filtered;
    const { after } = filter;
    const query =
      after === undefined
        ? { ...SQL.listFirst, values: [limit] }
        : { ...SQL.listAfter, values: [String(after), limit] };
    return (await this.run<PlantRow>(query)).map(plantFromRow);
  }

  async settleAfterImport(): Promise<void> {
    // pg takes a per-query query_timeout (lib/client.js); @types/pg does not declare it.
    const text = `BEGIN; SET LOCAL statement_timeout = ${MIGRATION_TIMEOUT_MS}; ANALYZE plants, plant_words; COMMIT`;
    await this.withClient((client) =>
      client.query({ text, query_timeout: MIGRATION_TIMEOUT_MS + 5_000 } as QueryConfig),
    );
  }

  async countPlants(): Promise<number> {
    const [row] = await this.run<{ n: string }>({ text: 'SELECT count(*) AS n FROM plants' });
    return Number(row?.n ?? 0);
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }

  readonly kind: StoreKind = 'postgres';

  /** A connection of its own, held until the snapshot is closed. */
  async openSnapshot(): Promise<StoreSnapshot> {
    const client = await this.pool.connect().catch((err: unknown) => Promise.reject(storeError(err)));
    return postgresSnapshot(client, (broken) => client.release(broken));
  }

  restoreInto<T>(work: (target: RestoreTarget) => Promise<T>): Promise<T> {
    return this.withClient((client) => postgresRestore(client, work));
  }
}
