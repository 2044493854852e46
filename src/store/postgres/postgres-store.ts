import { Pool, type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg';
import type { CreateOutcome, PlantRecord } from '../../domain/plant.js';
import type { TokenRecord } from '../../domain/token.js';
import {
  newEvent,
  type AttemptResult,
  type DueDelivery,
  type EndpointStatus,
  type WebhookEndpoint,
} from '../../domain/webhook.js';
import type { Store } from '../store.js';
import { postgresSettings } from './connection.js';
import { createPlantsOnce } from './create-plants.js';
import { storeError } from './errors.js';
import { runMigrations } from './migrations.js';
import { plantFromRow, SQL, tokenFromRow, type PlantRow, type Run, type TokenRow } from './rows.js';
import { emitEvents, PostgresWebhooks } from './webhooks.js';

/** Creates plants and, in the same transaction, the `plant.created` events of those really created. */
async function createAndEmit(plants: PlantRecord[], run: Run): Promise<CreateOutcome[]> {
  const outcomes = await createPlantsOnce(plants, run);
  const now = Date.now();
  await emitEvents(
    run,
    plants.filter((_, i) => outcomes[i]!.kind === 'created').map((p) => newEvent('plant.created', p, now)),
  );
  return outcomes;
}

interface Queryable {
  query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>>;
}

function runOn(q: Queryable): Run {
  return async <R extends QueryResultRow>(query: QueryConfig) => {
    try {
      return (await q.query<R>(query)).rows;
    } catch (err) {
      throw storeError(err);
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
  private readonly webhooks: PostgresWebhooks;

  constructor(databaseUrl: string, poolSize: number) {
    const settings = postgresSettings(databaseUrl, poolSize);
    this.schema = settings.schema;
    this.pool = new Pool(settings.pool);
    this.run = runOn(this.pool);
    this.webhooks = new PostgresWebhooks(this.run, (work) => this.transaction(work));
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

  private transaction<T>(work: (run: Run) => Promise<T>): Promise<T> {
    return this.withClient(async (client) => {
      const run = runOn(client);
      await run({ text: 'BEGIN' });
      const result = await work(run);
      await run({ text: 'COMMIT' });
      return result;
    });
  }

  /** Operations waiting for a pooled connection: how far this instance has fallen behind. */
  pendingWrites(): number {
    return this.pool.waitingCount;
  }

  migrate(): Promise<number> {
    return this.withClient((client) => runMigrations(client, this.schema));
  }

  async ping(): Promise<void> {
    await this.run({ text: 'SELECT 1' });
  }

  async createPlant(plant: PlantRecord): Promise<CreateOutcome> {
    return (await this.transaction((run) => createAndEmit([plant], run)))[0]!;
  }

  createPlants(plants: PlantRecord[]): Promise<CreateOutcome[]> {
    return this.transaction((run) => createAndEmit(plants, run));
  }

  async getPlant(id: bigint): Promise<PlantRecord | undefined> {
    const [row] = await this.run<PlantRow>({ ...SQL.getPlant, values: [String(id)] });
    return row && plantFromRow(row);
  }

  async listPlants(after: bigint | undefined, limit: number): Promise<PlantRecord[]> {
    const query =
      after === undefined
        ? { ...SQL.listFirst, values: [limit] }
        : { ...SQL.listAfter, values: [String(after), limit] };
    return (await this.run<PlantRow>(query)).map(plantFromRow);
  }

  async countPlants(): Promise<number> {
    const [row] = await this.run<{ n: string }>({ text: 'SELECT count(*) AS n FROM plants' });
    return Number(row?.n ?? 0);
  }

  // A change and its event commit together; only a change that happened emits one.
  replacePlant(plant: PlantRecord): Promise<boolean> {
    return this.transaction(async (run) => {
      const text = 'UPDATE plants SET name = $1, tag = $2 WHERE id = $3 RETURNING id';
      const replaced = (await run({ text, values: [plant.name, plant.tag ?? null, String(plant.id)] })).length === 1;
      if (replaced) await emitEvents(run, [newEvent('plant.updated', plant)]);
      return replaced;
    });
  }

  deletePlant(id: bigint): Promise<PlantRecord | undefined> {
    return this.transaction(async (run) => {
      const text = 'DELETE FROM plants WHERE id = $1 RETURNING id, name, tag';
      const [row] = await run<PlantRow>({ text, values: [String(id)] });
      const deleted = row && plantFromRow(row);
      if (deleted) await emitEvents(run, [newEvent('plant.deleted', deleted)]);
      return deleted;
    });
  }

  insertEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    return this.webhooks.insertEndpoint(endpoint);
  }

  listEndpoints(recent: number): Promise<EndpointStatus[]> {
    return this.webhooks.listEndpoints(recent);
  }

  removeEndpoint(id: string): Promise<boolean> {
    return this.webhooks.removeEndpoint(id);
  }

  claimDeliveries(now: number, leaseUntil: number, limit: number): Promise<DueDelivery[]> {
    return this.webhooks.claimDeliveries(now, leaseUntil, limit);
  }

  recordAttempt(result: AttemptResult): Promise<void> {
    return this.webhooks.recordAttempt(result);
  }

  countPendingDeliveries(): Promise<number> {
    return this.webhooks.countPendingDeliveries();
  }

  pruneEvents(before: number): Promise<number> {
    return this.webhooks.pruneEvents(before);
  }

  async insertToken(t: TokenRecord): Promise<void> {
    const text = `INSERT INTO tokens (id, name, hash, prefix, scopes, created_at, expires_at, revoked_at)
                  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
    const iso = (d: Date | null) => d?.toISOString() ?? null;
    const values = [t.id, t.name, t.hash, t.prefix, t.scopes, iso(t.createdAt), iso(t.expiresAt), iso(t.revokedAt)];
    await this.run({ text, values });
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | undefined> {
    const [row] = await this.run<TokenRow>({ ...SQL.tokenByHash, values: [hash] });
    return row && tokenFromRow(row);
  }

  async listTokens(): Promise<TokenRecord[]> {
    return (await this.run<TokenRow>({ text: 'SELECT * FROM tokens ORDER BY created_at, id' })).map(tokenFromRow);
  }

  async countTokens(): Promise<number> {
    const [row] = await this.run<{ n: string }>({ text: 'SELECT count(*) AS n FROM tokens' });
    return Number(row?.n ?? 0);
  }

  async revokeToken(id: string, at: Date): Promise<boolean> {
    const text = 'UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 RETURNING id';
    return (await this.run({ text, values: [at.toISOString(), id] })).length === 1;
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}
