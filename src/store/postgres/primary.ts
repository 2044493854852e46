import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg';
import { StoreUnavailableError } from '../../domain/errors.js';
import { CONNECT_TIMEOUT_MS, type PostgresSettings } from './connection.js';
import { isHostFailure } from './errors.js';
import { findPrimary } from './hosts.js';

/** Between two rounds of probes while no host answers as the primary (a standby not yet promoted). */
export const REPROBE_MS = 500;

type Host = PostgresSettings['hosts'][number];

/**
 * The pool of connections to the primary, which every statement of the store goes through.
 *
 * With one host: its pool, as before DATABASE_URL could name several. With several: the pool of
 * the first host, in the URL's order, that answers as a primary (not in recovery). When a statement
 * fails in a way that says its host is gone or takes no writes (isHostFailure: refused, cut,
 * shutting down, read-only), the hosts are asked again, every REPROBE_MS until one answers as the
 * primary, and a pool for it replaces the old one, which is ended. One search at a time, and it
 * holds nothing up: meanwhile statements go to the old pool and fail (503 with Retry-After), and a
 * search that finds the same host (a false alarm, a time-out under load) changes nothing.
 */
export class Primary {
  private current: { host: Host; pool: Pool } | undefined;
  private search: Promise<void> | undefined;
  private ended = false;
  private readonly several: boolean;
  /** What each host answered to the last search's probes: why none is the primary, when none is. */
  private answers = 'not asked yet';
  private readonly listeners: ((host: string, previous: string | undefined) => void)[] = [];

  constructor(private readonly settings: PostgresSettings) {
    this.several = settings.hosts.length > 1;
    if (this.several) this.lookAgain();
    else this.current = this.open(settings.hosts[0]!);
  }

  /** The host statements go to, once one answered as the primary. */
  get host(): string | undefined {
    return this.current?.host.name;
  }

  /** The hosts in the URL's order. */
  get hosts(): string[] {
    return this.settings.hosts.map((h) => h.name);
  }

  /** Whether the hosts are being asked which one is the primary. */
  get searching(): boolean {
    return this.search !== undefined;
  }

  /** Statements waiting for a pooled connection. */
  get waitingCount(): number {
    return this.current?.pool.waitingCount ?? 0;
  }

  query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>> {
    const pool = this.current?.pool;
    if (pool === undefined) return this.found().then((p) => this.watched(p, p.query<R>(config)));
    return this.several ? this.watched(pool, pool.query<R>(config)) : pool.query<R>(config);
  }

  connect(): Promise<PoolClient> {
    const pool = this.current?.pool;
    if (pool === undefined) return this.found().then((p) => this.watched(p, p.connect()));
    return this.several ? this.watched(pool, pool.connect()) : pool.connect();
  }

  /** `listener` is told of each host found to be the primary (with several hosts), and of the one before. */
  onChange(listener: (host: string, previous: string | undefined) => void): void {
    this.listeners.push(listener);
  }

  /** A statement on a connection of connect()'s failed with `err`, which may say its host is gone. */
  failed(err: unknown): void {
    if (this.several && isHostFailure(err)) this.lookAgain();
  }

  /** The primary answered as a standby (it was demoted): which host is the primary now? */
  recheck(): void {
    if (this.several) this.lookAgain();
  }

  async end(): Promise<void> {
    this.ended = true;
    const pool = this.current?.pool;
    if (pool !== undefined && !pool.ended) await pool.end();
  }

  /** A failure of the current pool's host starts a search; one of a pool already replaced does not. */
  private watched<T>(pool: Pool, work: Promise<T>): Promise<T> {
    return work.catch((err: unknown) => {
      if (pool === this.current?.pool) this.failed(err);
      throw err;
    });
  }

  /**
   * The pool once a host answered as the primary, for a statement that came before any did (at
   * start): it waits for the search as long as for a pooled connection, then is answered 503.
   */
  private async found(): Promise<Pool> {
    this.lookAgain();
    const ac = new AbortController();
    await Promise.race([
      this.search,
      sleep(CONNECT_TIMEOUT_MS, undefined, { signal: ac.signal }).catch(() => undefined),
    ]);
    ac.abort();
    if (this.current !== undefined) return this.current.pool;
    const why = new Error(`no host answers as the primary (${this.answers})`);
    throw new StoreUnavailableError(why, `no database host answers as the primary; retry later`);
  }

  private lookAgain(): void {
    if (this.search !== undefined || this.ended) return;
    this.search = this.find().finally(() => (this.search = undefined));
  }

  private async find(): Promise<void> {
    for (;;) {
      const { primary: host, answers } = await findPrimary(this.settings.pool, this.settings.hosts);
      this.answers = answers;
      if (this.ended) return;
      if (host !== undefined) return this.use(host);
      await sleep(REPROBE_MS, undefined, { ref: false });
      if (this.ended) return;
    }
  }

  private use(host: Host): void {
    if (this.current?.host === host) return;
    const old = this.current;
    this.current = this.open(host);
    // Its connections in use finish (or fail) their statements first; their failures start no search.
    if (old !== undefined) void old.pool.end().catch(() => undefined);
    for (const listener of this.listeners) listener(host.name, old?.host.name);
  }

  private open(host: Host): { host: Host; pool: Pool } {
    const pool = new Pool({ ...this.settings.pool, connectionString: host.connectionString });
    // An idle connection that breaks (database restart, network cut) is dropped by the pool;
    // without a listener the 'error' event would end the process. With several hosts, it may
    // be the first sign that the primary is gone.
    pool.on('error', (err) => {
      if (pool === this.current?.pool) this.failed(err);
    });
    // The same event on a checked-out connection between two statements of a transaction.
    pool.on('connect', (client) => client.on('error', () => undefined));
    return { host, pool };
  }
}
