import type { QueryConfig, QueryResultRow } from 'pg';
import type { PlantRecord } from '../../domain/plant.js';

/** pg hands int8 over as a decimal string: ids go through BigInt and never through a float. */
export interface PlantRow {
  id: string;
  name: string;
  tag: string | null;
}

/** Runs one statement and resolves to its rows; outages reject with StoreUnavailableError. */
export type Run = <R extends QueryResultRow>(query: QueryConfig) => Promise<R[]>;

/** How the statements of a transaction reach PostgreSQL. */
export interface Statements {
  /** These statements in order, in one round trip where the transaction can; the rows of each. */
  together(queries: QueryConfig[]): Promise<QueryResultRow[][]>;
  /** A statement whose result no one reads: it may be held, to go with the next ones or the COMMIT. */
  later(query: QueryConfig): Promise<void>;
  /**
   * The last statements of the transaction, then its COMMIT, in one round trip where the
   * transaction can; the rows of each, once committed. Nothing may follow.
   */
  commitWith(queries: QueryConfig[]): Promise<QueryResultRow[][]>;
}

/** Each statement in a round trip of its own, as it comes. */
export function oneByOne(run: Run): Statements {
  return {
    async together(queries) {
      const rows: QueryResultRow[][] = [];
      for (const query of queries) rows.push(await run(query));
      return rows;
    },
    later: async (query) => void (await run(query)),
    async commitWith(queries) {
      const rows: QueryResultRow[][] = [];
      for (const query of queries) rows.push(await run(query));
      return rows;
    },
  };
}

export function plantFromRow(row: PlantRow): PlantRecord {
  const id = BigInt(row.id);
  return row.tag === null ? { id, name: row.name } : { id, name: row.name, tag: row.tag };
}
