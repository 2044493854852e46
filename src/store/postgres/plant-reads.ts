import type { PlantRecord } from '../../domain/plant.js';
import type { PlantListQuery } from '../../domain/plant-query.js';
import type { PlantStore } from '../plants.js';
import { Batcher } from './batcher.js';
import { OPERATION_BUDGET_MS } from './connection.js';
import { listFiltered } from './plant-filters.js';
import { late } from './pool.js';
import { plantFromRow, type PlantRow, type Run } from './rows.js';

/**
 * Most statements of reads by id under way at once: concurrent reads of one plant each share one
 * statement, as writes share a batch, instead of a round trip and a statement apiece.
 */
const READ_CONNECTIONS = 2;

/** Named statements are parsed once per connection, then only bound and run: the hot paths. */
const SQL = {
  getPlants: { text: 'SELECT id, name, tag FROM plants WHERE id = ANY($1::bigint[])' },
  listFirst: { text: 'SELECT id, name, tag FROM plants ORDER BY id LIMIT $1' },
  listAfter: { text: 'SELECT id, name, tag FROM plants WHERE id > $1 ORDER BY id LIMIT $2' },
} as const;

/**
 * The reads of plants on one database, the primary's or a standby's (replicas.ts): by id, where
 * concurrent reads share one statement, and by page.
 */
export class PlantReads implements Pick<PlantStore, 'get' | 'list'> {
  private readonly batches: Batcher<bigint, PlantRecord | undefined>;

  constructor(
    private readonly run: Run,
    poolSize: number,
  ) {
    const budget = { ms: OPERATION_BUDGET_MS, late };
    this.batches = new Batcher((ids) => this.readBatch(ids), Math.min(READ_CONNECTIONS, poolSize), budget);
  }

  /** Reads waiting for a batch. */
  get waiting(): number {
    return this.batches.waiting;
  }

  get(id: bigint): Promise<PlantRecord | undefined> {
    return this.batches.submit(id);
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

  async list(filter: PlantListQuery, limit: number): Promise<PlantRecord[]> {
    const filtered = await listFiltered(this.run, filter, limit);
    if (filtered) return filtered;
    const { after } = filter;
    const query =
      after === undefined
        ? { ...SQL.listFirst, values: [limit] }
        : { ...SQL.listAfter, values: [String(after), limit] };
    return (await this.run<PlantRow>(query)).map(plantFromRow);
  }
}
