import type { QueryConfig } from 'pg';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { PlantRecord } from '../../domain/plant.js';
import type { PlantListQuery } from '../../domain/plant-query.js';
import type { PlantWrite, Written } from '../../domain/plant-write.js';
import { SNAPSHOT_PAGE, type RecordsInBackup } from '../backup.js';
import type { PlantStore } from '../plants.js';
import type { Tracing } from '../../tracing/tracing.js';
import { Acknowledged } from '../acknowledged.js';
import { applyWrites, type ApplyOptions } from '../write-path.js';
import { Batcher } from './batcher.js';
import { OPERATION_BUDGET_MS } from './connection.js';
import { isUnavailable } from './errors.js';
import { MIGRATION_TIMEOUT_MS } from './migrations.js';
import { PlantReads } from './plant-reads.js';
import { postgresPlantTx } from './plant-tx.js';
import { late, type PostgresPool } from './pool.js';
import { oneByOne, plantFromRow, type PlantRow, type Run } from './rows.js';

/**
 * Most batches of plant writes under way at once, each on its own connection: the rest of the
 * pool stays free for reads, token look-ups and the dispatcher. One: since a batch takes two
 * round trips, one connection keeps up, and the writes that arrive meanwhile make the next batch
 * larger, which costs PostgreSQL less per write. More connections did not make writes faster,
 * and more than two made them slower (docs/performance.md).
 */
const WRITE_CONNECTIONS = 1;

/**
 * The server cancels a batch of writes this long before its callers stop waiting, so that a batch
 * held up by other transactions' locks is answered with the server's reason (busy: errors.ts)
 * rather than with the callers' own time-out, which cannot tell a lock wait from a database that
 * does not answer (unavailable).
 */
const SERVER_FIRST_MS = 200;

/** A deadlock or a serialization failure: the transaction may simply be run again. */
function conflicted(err: unknown): boolean {
  const code = ((err instanceof StoreUnavailableError ? err.cause : err) as { code?: unknown } | undefined)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * The plants of the PostgreSQL store. Concurrent writes share a batch, one transaction of the
 * write path (plant-tx.ts) whose every step is one statement for all of them; concurrent reads by
 * id share one statement.
 */
export class PostgresPlants implements PlantStore {
  private readonly writes: Batcher<PlantWrite, Written>;
  /** Reads by id and by page, on the primary (standbys have their own: replicas.ts). */
  readonly reads: PlantReads;
  /** Write transactions committed, and the plant writes they carried. */
  readonly committed = { commits: 0, writes: 0 };

  /** Told of every write this store commits, as it is acknowledged (the change feed's hub listens). */
  readonly acknowledged = new Acknowledged();

  constructor(
    private readonly pool: PostgresPool,
    poolSize: number,
    tracing?: Tracing,
  ) {
    const budget = { ms: OPERATION_BUDGET_MS, late };
    this.writes = new Batcher(
      (batch, timeoutMs) =>
        this.writeTogether(batch, Date.now() + (timeoutMs > SERVER_FIRST_MS ? timeoutMs - SERVER_FIRST_MS : timeoutMs)),
      Math.min(WRITE_CONNECTIONS, poolSize),
      budget,
      undefined,
      tracing,
    );
    this.reads = new PlantReads(pool.run, poolSize);
  }

  /** Writes and reads waiting for a batch. */
  get waiting(): number {
    return this.writes.waiting + this.reads.waiting;
  }

  write(write: PlantWrite): Promise<Written> {
    return this.writes.submit(write);
  }

  writeAll(writes: PlantWrite[]): Promise<Written[]> {
    return this.commitWrites(writes);
  }

  /**
   * A transaction of its own, within a request's budget: a savepoint in the batch of concurrent
   * single writes would cost that batch a round trip more.
   */
  writeBatch(writes: PlantWrite[]): Promise<Written[]> {
    return this.commitRetried(writes, Date.now() + OPERATION_BUDGET_MS, { allOrNothing: true });
  }

  /** Another instance's batch locked the same plants in another order (a deadlock): once more. */
  private commitRetried(writes: PlantWrite[], deadline: number, options?: ApplyOptions): Promise<Written[]> {
    return this.commitWrites(writes, deadline, options).catch((err: unknown) =>
      conflicted(err) ? this.commitWrites(writes, deadline, options) : Promise.reject(err),
    );
  }

  /** One transaction of plant writes, counted once committed. */
  private async commitWrites(writes: PlantWrite[], deadline?: number, options?: ApplyOptions): Promise<Written[]> {
    const outcomes = await this.pool.batchTransaction(
      (statements) => applyWrites(writes, postgresPlantTx(statements), options),
      deadline,
    );
    this.committed.commits++;
    this.committed.writes += writes.length;
    return this.acknowledged.told(outcomes);
  }

  /**
   * One transaction for a batch of concurrent writes, each step one statement for all of them.
   * If the batch fails for another reason than an outage, its halves are tried again, one after
   * the other (so writes of one id keep their order), down to the write that cannot be made: it
   * fails alone, after a few transactions rather than one per write.
   */
  private async writeTogether(batch: PlantWrite[], deadline: number): Promise<PromiseSettledResult<Written>[]> {
    try {
      const outcomes = await this.commitRetried(batch, deadline);
      return outcomes.map((value) => ({ status: 'fulfilled', value }));
    } catch (err) {
      if (err instanceof StoreUnavailableError || isUnavailable(err)) throw err;
      if (batch.length === 1) return [{ status: 'rejected', reason: err }];
      const half = Math.ceil(batch.length / 2);
      return [
        ...(await this.writeTogether(batch.slice(0, half), deadline)),
        ...(await this.writeTogether(batch.slice(half), deadline)),
      ];
    }
  }

  async settleAfterImport(): Promise<void> {
    // pg takes a per-query query_timeout (lib/client.js); @types/pg does not declare it.
    const begin = this.pool.begin({ statementTimeoutMs: MIGRATION_TIMEOUT_MS });
    const text = `${begin}; ANALYZE plants, plant_words; COMMIT`;
    await this.pool.withClient((client) =>
      client.query({ text, query_timeout: MIGRATION_TIMEOUT_MS + 5_000 } as QueryConfig),
    );
  }

  get(id: bigint): Promise<PlantRecord | undefined> {
    return this.reads.get(id);
  }

  list(filter: PlantListQuery, limit: number): Promise<PlantRecord[]> {
    return this.reads.list(filter, limit);
  }

  async count(): Promise<number> {
    const [row] = await this.pool.run<{ n: string }>({ text: 'SELECT count(*) AS n FROM plants' });
    return Number(row?.n ?? 0);
  }
}

/**
 * Plants in a backup: read a page at a time by key; restored through the write path's own insert,
 * which writes the words of their names with them (plant-words.ts): the store is searchable from
 * the commit on, and a restore that fails leaves neither plants nor words. The indexes are kept
 * up row by row: dropping one would take ACCESS EXCLUSIVE, and hold every read of plants until
 * the commit.
 */
export const plantsInBackup: RecordsInBackup<PlantRecord, Run> = {
  tables: ['plants', 'plant_words'],
  snapshot: (run) => ({
    async *pages() {
      for (let last: bigint | undefined, more = true; more;) {
        const query =
          last === undefined
            ? { text: 'SELECT id, name, tag FROM plants ORDER BY id LIMIT $1', values: [SNAPSHOT_PAGE] }
            : {
                text: 'SELECT id, name, tag FROM plants WHERE id > $1 ORDER BY id LIMIT $2',
                values: [String(last), SNAPSHOT_PAGE],
              };
        const page = (await run<PlantRow>(query)).map(plantFromRow);
        if (page.length > 0) yield page;
        more = page.length === SNAPSHOT_PAGE;
        last = page.at(-1)?.id;
      }
    },
  }),
  restore(run) {
    const tx = postgresPlantTx(oneByOne(run));
    return {
      async count() {
        const [row] = await run<{ n: string }>({ text: 'SELECT count(*) AS n FROM plants' });
        return Number(row?.n ?? 0);
      },
      insert: async (plants) => (await tx.insert(plants)).size,
    };
  },
};
