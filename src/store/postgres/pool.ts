import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { StoreUnavailableError } from '../../domain/errors.js';
import { tracing } from '../../tracing/tracing.js';
import { OPERATION_BUDGET_MS, TOKEN_LOOKUP_BUDGET_MS, type PostgresSettings } from './connection.js';
import { storeError } from './errors.js';
import { inline } from './inline.js';
import { Primary } from './primary.js';
import type { Run, Statements } from './rows.js';

/** Milliseconds to `deadline`, at least 1 (0 would turn PostgreSQL's statement time-out off). */
function remaining(deadline: number): number {
  return Math.max(1, Math.ceil(deadline - Date.now()));
}

interface Queryable {
  query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>>;
}

/** Past its budget an operation is answered 503, whatever its statement is still doing. */
export const late = (budgetMs = OPERATION_BUDGET_MS) =>
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
 * A transaction's span, from the wait for a connection to the answer to its COMMIT, when it is a
 * request's (or a batch's of requests: batcher.ts).
 */
function traced<T>(transaction: Promise<T>): Promise<T> {
  const span = tracing?.transaction('postgresql');
  if (span === undefined) return transaction;
  transaction.then(
    () => span.end(),
    (err: unknown) => span.end(err),
  );
  return transaction;
}

/** The store's pool of connections, and the ways each kind of record runs its statements on it. */
export class PostgresPool {
  /** The pool of the primary's connections: with several hosts, it follows a failover. */
  readonly primary: Primary;
  /** One statement on a pooled connection, within a request's budget. */
  readonly run: Run;
  /** A token's look-up by a request, with its own short budget: see TOKEN_LOOKUP_BUDGET_MS. */
  readonly lookUp: Run;

  constructor(settings: PostgresSettings) {
    this.primary = new Primary(settings);
    this.run = runOn(this.primary, OPERATION_BUDGET_MS);
    this.lookUp = runOn(this.primary, TOKEN_LOOKUP_BUDGET_MS);
  }

  /** Operations waiting for a pooled connection. */
  get waiting(): number {
    return this.primary.waitingCount;
  }

  /** A connection of the caller's own, which it must release. */
  connect(): Promise<PoolClient> {
    return this.primary.connect().catch((err: unknown) => Promise.reject(storeError(err)));
  }

  /** One connection for `work`; one that failed is closed (which rolls back), never reused. */
  async withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect();
    try {
      const result = await work(client);
      client.release();
      return result;
    } catch (err) {
      client.release(true);
      this.primary.failed(err);
      throw storeError(err);
    }
  }

  /** `work` in one transaction on one connection. */
  transaction<T>(work: (run: Run) => Promise<T>): Promise<T> {
    return traced(
      this.withClient(async (client) => {
        const run = runOn(client);
        await run({ text: 'BEGIN' });
        const result = await work(run);
        await run({ text: 'COMMIT' });
        return result;
      }),
    );
  }

  /**
   * `work` in one transaction, in as few round trips as its statements allow. Each round trip
   * is one simple-protocol query of several statements, their parameters written in as literals
   * (inline.ts): BEGIN goes with the first statement, and statements whose result no one reads
   * are held for the next round trip, the last one with the COMMIT. A batch of creations is two
   * round trips (BEGIN, lock and insert; COMMIT), a batch of replaces or deletes two (BEGIN and
   * lock; the change and COMMIT). Under write load each round trip of a batch waits its turn on
   * a busy event loop, so each round trip saved is a wait saved (docs/performance.md).
   */
  batchTransaction<T>(work: (statements: Statements) => Promise<T>, deadline?: number): Promise<T> {
    let refused: { error: unknown } | undefined;
    const done = this.withClient(async (client) => {
      // A batch with a deadline has the server cancel it there (a lock it waits for included);
      // SET LOCAL lasts for this transaction only, so nothing stays in the session.
      const timeout = deadline === undefined ? [] : [`SET LOCAL statement_timeout = ${remaining(deadline)}`];
      let open = false;
      let failed = false;
      const held: QueryConfig[] = [];
      const send = async (queries: QueryConfig[]): Promise<QueryResultRow[][]> => {
        const texts = [...(open ? [] : ['BEGIN', ...timeout]), ...held.splice(0).map(inline), ...queries.map(inline)];
        open = true;
        const results = (await client.query(texts.join(';\n')).catch((err: unknown) => {
          failed = true;
          throw err;
        })) as unknown as QueryResult | QueryResult[];
        return (Array.isArray(results) ? results : [results]).slice(texts.length - queries.length).map((r) => r.rows);
      };
      let committed = false;
      const commitWith = async (queries: QueryConfig[]) => {
        committed = true;
        return (await send([...queries, { text: 'COMMIT' }])).slice(0, queries.length);
      };
      let result: T;
      try {
        result = await work({ together: send, later: async (query) => void held.push(query), commitWith });
      } catch (err) {
        // The work gave up by itself (a batch with a refused write), every statement answered:
        // the connection is sound, so it rolls back and goes back to the pool.
        if (failed || committed) throw err;
        if (open) await client.query('ROLLBACK');
        refused = { error: err };
        return undefined;
      }
      if (!committed && (open || held.length)) await send([{ text: 'COMMIT' }]);
      return result;
    });
    // A batch its work refused (a write's precondition) rolled back as asked: no failure of its span.
    return traced(done).then((result) => (refused ? Promise.reject(refused.error) : (result as T)));
  }

  end(): Promise<void> {
    return this.primary.end();
  }
}
