import type Database from 'better-sqlite3';
import type { CreateOutcome, PlantRecord } from '../../domain/plant.js';
import type { TokenRecord } from '../../domain/token.js';
import type { AttemptResult, DueDelivery, EndpointStatus, EventType, WebhookEndpoint } from '../../domain/webhook.js';
import type { Store } from '../store.js';
import { openConnection, PLANT_BY_ID, plantFromRow, tokenFromRow, type PlantRow, type TokenRow } from './connection.js';
import { GroupCommitWriter } from './group-commit.js';
import { sqliteMigrations } from './migrations.js';

/**
 * The embedded store: one SQLite file in WAL mode. Reads run here, on their own connection
 * (WAL lets them proceed while a commit is under way); every change goes through the group
 * commit writer and resolves only after its fsync'd commit.
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly writer: GroupCommitWriter;
  private prepared: ReturnType<SqliteStore['prepare']> | undefined;

  constructor(readonly path: string) {
    this.db = openConnection(path);
    this.writer = new GroupCommitWriter(path);
  }

  /** Statements need the tables, so they are prepared once the schema is current. */
  private get stmt() {
    this.prepared ??= this.prepare();
    return this.prepared;
  }

  private prepare() {
    return {
      getPlant: this.db.prepare<[bigint], PlantRow>(PLANT_BY_ID),
      listFirst: this.db.prepare<[number], PlantRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?'),
      listAfter: this.db.prepare<[bigint, number], PlantRow>(
        'SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?',
      ),
      tokenByHash: this.db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE hash = ?'),
      listTokens: this.db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id'),
      countTokens: this.db.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM tokens'),
      countPlants: this.db.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM plants'),
      endpoints: this.db.prepare<[], EndpointRow>(
        `SELECT e.id, e.url, e.events, e.enabled, e.disabled_reason, e.created_at,
           (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending') AS pending,
           (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'delivered') AS delivered,
           (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed') AS failed
         FROM webhook_endpoints e ORDER BY e.created_at, e.id`,
      ),
      recent: this.db.prepare<[string, number], RecentRow>(
        `SELECT ev.id AS event_id, ev.type, d.state, d.attempts, d.last_status, d.last_error, d.last_attempt_at
         FROM deliveries d JOIN events ev ON ev.seq = d.event_seq
         WHERE d.endpoint_id = ? AND d.attempts > 0 ORDER BY d.last_attempt_at DESC LIMIT ?`,
      ),
      anyDue: this.db.prepare<[number, number], { due: bigint }>(
        `SELECT EXISTS (SELECT 1 FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ?
                        AND (locked_until IS NULL OR locked_until <= ?)) AS due`,
      ),
      countPending: this.db.prepare<[], { n: bigint }>("SELECT count(*) AS n FROM deliveries WHERE state = 'pending'"),
    };
  }

  /** Commits so far (group commit: one per batch of writes). */
  get commits(): number {
    return this.writer.commits;
  }

  writeStats(): { commits: number; writes: number } {
    return { commits: this.writer.commits, writes: this.writer.writes };
  }

  pendingWrites(): number {
    return this.writer.pending;
  }

  async migrate(): Promise<number> {
    // IMMEDIATE takes the write lock first, so two processes starting together migrate once.
    const applied = this.db
      .transaction(() => {
        const version = Number(this.db.pragma('user_version', { simple: true }));
        for (const sql of sqliteMigrations.slice(version)) this.db.exec(sql);
        this.db.pragma(`user_version = ${sqliteMigrations.length}`);
        return Math.max(0, sqliteMigrations.length - version);
      })
      .immediate();
    this.writer.warmUp();
    return applied;
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async createPlant(plant: PlantRecord): Promise<CreateOutcome> {
    return (await this.writer.submit({ kind: 'createPlant', plant })) as CreateOutcome;
  }

  async createPlants(plants: PlantRecord[]): Promise<CreateOutcome[]> {
    return (await this.writer.submit({ kind: 'createPlants', plants })) as CreateOutcome[];
  }

  async getPlant(id: bigint): Promise<PlantRecord | undefined> {
    const row = this.stmt.getPlant.get(id);
    return row && plantFromRow(row);
  }

  async listPlants(after: bigint | undefined, limit: number): Promise<PlantRecord[]> {
    const rows = after === undefined ? this.stmt.listFirst.all(limit) : this.stmt.listAfter.all(after, limit);
    return rows.map(plantFromRow);
  }

  async replacePlant(plant: PlantRecord): Promise<boolean> {
    return (await this.writer.submit({ kind: 'replacePlant', plant })) as boolean;
  }

  async deletePlant(id: bigint): Promise<PlantRecord | undefined> {
    return (await this.writer.submit({ kind: 'deletePlant', id })) as PlantRecord | undefined;
  }

  async countPlants(): Promise<number> {
    return Number(this.stmt.countPlants.get()?.n ?? 0);
  }

  async insertToken(token: TokenRecord): Promise<void> {
    await this.writer.submit({ kind: 'insertToken', token });
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | undefined> {
    const row = this.stmt.tokenByHash.get(hash);
    return row && tokenFromRow(row);
  }

  async listTokens(): Promise<TokenRecord[]> {
    return this.stmt.listTokens.all().map(tokenFromRow);
  }

  async countTokens(): Promise<number> {
    return Number(this.stmt.countTokens.get()?.n ?? 0);
  }

  async revokeToken(id: string, at: Date): Promise<boolean> {
    return (await this.writer.submit({ kind: 'revokeToken', id, at })) as boolean;
  }

  async insertEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    await this.writer.submit({ kind: 'insertEndpoint', endpoint });
  }

  async listEndpoints(recent: number): Promise<EndpointStatus[]> {
    return this.stmt.endpoints.all().map((e) => ({
      endpoint: {
        id: e.id,
        url: e.url,
        events: e.events.split(' ').filter(Boolean) as EventType[],
        enabled: e.enabled === 1n,
        disabledReason: e.disabled_reason,
        createdAt: new Date(Number(e.created_at)),
      },
      pending: Number(e.pending),
      delivered: Number(e.delivered),
      failed: Number(e.failed),
      recent: this.stmt.recent.all(e.id, recent).map((r) => ({
        eventId: r.event_id,
        type: r.type,
        state: r.state,
        attempts: Number(r.attempts),
        status: r.last_status === null ? null : Number(r.last_status),
        error: r.last_error,
        at: r.last_attempt_at === null ? null : new Date(Number(r.last_attempt_at)),
      })),
    }));
  }

  async removeEndpoint(id: string): Promise<boolean> {
    return (await this.writer.submit({ kind: 'removeEndpoint', id })) as boolean;
  }

  async claimDeliveries(now: number, leaseUntil: number, limit: number): Promise<DueDelivery[]> {
    // Polled every second: a read first keeps an idle dispatcher off the writer thread.
    if (this.stmt.anyDue.get(now, now)?.due !== 1n) return [];
    return (await this.writer.submit({ kind: 'claimDeliveries', now, leaseUntil, limit })) as DueDelivery[];
  }

  async recordAttempt(result: AttemptResult): Promise<void> {
    await this.writer.submit({ kind: 'recordAttempt', result });
  }

  async pruneEvents(before: number): Promise<number> {
    return (await this.writer.submit({ kind: 'pruneEvents', before })) as number;
  }

  async countPendingDeliveries(): Promise<number> {
    return Number(this.stmt.countPending.get()?.n ?? 0);
  }

  async close(): Promise<void> {
    await this.writer.close();
    if (this.db.open) this.db.close();
  }
}

interface EndpointRow {
  id: string;
  url: string;
  events: string;
  enabled: bigint;
  disabled_reason: string | null;
  created_at: bigint;
  pending: bigint;
  delivered: bigint;
  failed: bigint;
}

interface RecentRow {
  event_id: string;
  type: string;
  state: string;
  attempts: bigint;
  last_status: bigint | null;
  last_error: string | null;
  last_attempt_at: bigint | null;
}
