import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { Tracing } from '../../tracing/tracing.js';
import {
  beginWith,
  IDLE_IN_TRANSACTION_MS,
  localSettings,
  OPERATION_BUDGET_MS,
  STATEMENT_TIMEOUT_MS,
  TOKEN_LOOKUP_BUDGET_MS,
  type PostgresSettings,
} from './connection.js';
import { storeError } from './errors.js';
import { inline } from './inline.js';
import { Primary } from './primary.js';
import type { Run, Statements } from './rows.js';

/** Milliseconds to `deadline`, at least 1 (0 would turn PostgreSQL's statement time-out off). */
function remaining(deadline: number): number {
  return Math.max(1, Math.ceil(deadline - Date.now()));
}

/** A transaction's BEGIN (with its options) and its settings, where they differ from a request's. */
export interface BeginOptions {
  begin?: string;
  statementTimeoutMs?: number;
  idleMs?: number;
}

/** Sends one statement and answers its result. */
type Send = <R extends QueryResultRow>(query: QueryConfig) => Promise<QueryResult<R>>;

/** Past its budget an operation is answered 503, whatever its statement is still doing. */
export const late = (budgetMs = OPERATION_BUDGET_MS) =>
  new StoreUnavailableError(new Error(`no answer from the database in ${budgetMs} ms`));

/**
 * Statements sent by `send`; with `budgetMs`, each is answered `late()` once its budget is spent
 * (a wait for a pooled connection included), while the server cancels it at its statement time-out.
 */
function runOn(send: Send, budgetMs?: number): Run {
  return async <R extends QueryResultRow>(query: QueryConfig) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const rows = send<R>(query).then((r) => r.rows);
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

/** The results of a simple-protocol query, one per statement (pg answers a lone one's bare). */
const resultsOf = (answer: QueryResult | QueryResult[]) => (Array.isArray(answer) ? answer : [answer]);

/**
 * A statement outside any transaction, on a pooled connection: one simple-protocol query of its
 * settings (SET LOCAL, `prelude`) and the statement, its parameters written in as literals
 * (inline.ts). PostgreSQL runs the statements of one such query in one implicit transaction,
 * which the settings last for: one round trip, and nothing left in the session. No prepared
 * statement either, named or not: each is parsed and planned where it runs (docs/performance.md).
 */
function sendAlone(primary: Primary, prelude: string): Send {
  return async <R extends QueryResultRow>(query: QueryConfig) => {
    const answer = (await primary.query({ text: prelude + inline(query) })) as unknown as
      QueryResult<R> | QueryResult<R>[];
    return resultsOf(answer).at(-1) as QueryResult<R>;
  };
}

/**
 * A transaction's span, from the wait for a connection to the answer to its COMMIT, when it is a
 * request's (or a batch's of requests: batcher.ts).
 */
function traced<T>(tracing: Tracing | undefined, transaction: Promise<T>): Promise<T> {
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
  private readonly schema: string | undefined;
  /** One statement on a pooled connection, within a request's budget. */
  readonly run: Run;
  /** A token's look-up by a request, with its own short budget: see TOKEN_LOOKUP_BUDGET_MS. */
  readonly lookUp: Run;

  constructor(
    settings: PostgresSettings,
    /** Traces, when on (services.ts): its transactions are spans. */
    private readonly tracing?: Tracing,
  ) {
    this.primary = new Primary(settings);
    this.schema = settings.schema;
    const alone = sendAlone(
      this.primary,
      `${localSettings(this.schema, { statementTimeoutMs: STATEMENT_TIMEOUT_MS }).join(';\n')};\n`,
    );
    this.run = runOn(alone, OPERATION_BUDGET_MS);
    this.lookUp = runOn(alone, TOKEN_LOOKUP_BUDGET_MS);
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

  /**
   * The first round trip of a transaction of the store's: BEGIN (or `begin`, with its options),
   * the statement time-out, the idle time-out and the search_path, all for this transaction only.
   */
  readonly begin = ({
    begin = 'BEGIN',
    statementTimeoutMs = STATEMENT_TIMEOUT_MS,
    idleMs = IDLE_IN_TRANSACTION_MS,
  }: BeginOptions = {}): string => beginWith(this.schema, { statementTimeoutMs, idleMs }, begin);

  /**
   * `work` in one transaction on one connection; its statements bind their parameters (unnamed
   * statements: parsed again each time, nothing kept in the session).
   */
  transaction<T>(work: (run: Run) => Promise<T>): Promise<T> {
    return traced(
      this.tracing,
      this.withClient(async (client) => {
        const run = runOn((query) => client.query(query));
        await run({ text: this.begin() });
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
      // A batch with a deadline has the server cancel it there (a lock it waits for included).
      const begin = this.begin(deadline === undefined ? {} : { statementTimeoutMs: remaining(deadline) });
      let open = false;
      let failed = false;
      const held: QueryConfig[] = [];
      const send = async (queries: QueryConfig[]): Promise<QueryResultRow[][]> => {
        const texts = [...(open ? [] : [begin]), ...held.splice(0).map(inline), ...queries.map(inline)];
        open = true;
        const answer = (await client.query(texts.join(';\n')).catch((err: unknown) => {
          failed = true;
          throw err;
        })) as unknown as QueryResult | QueryResult[];
        const results = resultsOf(answer);
        return results.slice(results.length - queries.length).map((r) => r.rows);
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
    return traced(this.tracing, done).then((result) => (refused ? Promise.reject(refused.error) : (result as T)));
  }

  end(): Promise<void> {
    return this.primary.end();
  }
}
