// A `Store` kept in Maps, for the use-cases' tests (the way Unleash's fake stores stand in for its
// database): what a use-case asks of a store answers in microseconds, no file, no server. It keeps
// the promises store/store.ts makes that a use-case can see, through the same write path
// (store/write-path.ts, on a `PlantTx` over a copy of the plants, committed whole or not at all):
// a creation's retry and conflict, replace, patch, delete and their conditions, a batch all or
// nothing, one change in the log per change of a plant in commit order, pages by id and the
// list's filters, tokens unique by hash and revoked once, a snapshot and a restore.
//
// What it does not keep: webhook deliveries (the outbox's methods throw; its endpoints are kept),
// durability, concurrency between instances and standbys. The stores' own suites (test/store/)
// hold SQLite and PostgreSQL to the same promises; test/use-cases/memory-store.test.ts holds
// this one to a few of them.
import { changeOf, type Change, type LogBounds } from '../../src/domain/change.js';
import { StoreUnavailableError } from '../../src/domain/errors.js';
import type { PlantRecord } from '../../src/domain/plant.js';
import type { PlantListQuery } from '../../src/domain/plant-query.js';
import type { PlantWrite, Written } from '../../src/domain/plant-write.js';
import { searchWords } from '../../src/domain/search-words.js';
import type { TokenRecord } from '../../src/domain/token.js';
import type { NewEvent, WebhookEndpoint } from '../../src/domain/webhook.js';
import type { BackedUp, RecordKind, RestoreTarget, StoreSnapshot } from '../../src/store/backup.js';
import { Acknowledged } from '../../src/store/acknowledged.js';
import { SCAN_WINDOW, type ChangeLog, type ChangePage } from '../../src/store/changes.js';
import type { PlantStore } from '../../src/store/plants.js';
import { KNOWN_SCHEMA_VERSIONS } from '../../src/store/schema-versions.js';
import type { ReadHost, Store, StoreHealth, StoreReads } from '../../src/store/store.js';
import type { TokenStore } from '../../src/store/tokens.js';
import type { TicketRecord } from '../../src/domain/ticket.js';
import type { WebhookStore } from '../../src/store/webhooks.js';
import { applyWrites, type Current, type PlantTx } from '../../src/store/write-path.js';

/** Everything the store holds; a transaction works on a copy and puts it back when it commits. */
interface State {
  plants: Map<bigint, PlantRecord>;
  changes: Change[];
  floor: bigint;
  /** The last position given. */
  position: bigint;
}

const copy = (s: State): State => ({ ...s, plants: new Map(s.plants), changes: [...s.changes] });

/** The write path's side of one transaction, over a copy of the state. */
class MapTx implements PlantTx {
  constructor(private readonly state: State) {}

  async read(ids: bigint[], creations: PlantRecord[]): Promise<Current> {
    const plants = new Map<bigint, PlantRecord>();
    for (const id of ids) {
      const p = this.state.plants.get(id);
      if (p) plants.set(id, p);
    }
    return { plants, inserted: await this.insert(creations), position: this.state.position };
  }

  async insert(plants: PlantRecord[]): Promise<Set<bigint>> {
    const inserted = new Set<bigint>();
    for (const p of plants) {
      if (this.state.plants.has(p.id)) continue;
      this.state.plants.set(p.id, p);
      inserted.add(p.id);
    }
    return inserted;
  }

  async update(updates: { plant: PlantRecord; before: PlantRecord }[]): Promise<void> {
    for (const { plant } of updates) this.state.plants.set(plant.id, plant);
  }

  async delete(plants: PlantRecord[]): Promise<void> {
    for (const p of plants) this.state.plants.delete(p.id);
  }

  async log(events: NewEvent[]): Promise<bigint[]> {
    return events.map((e) => {
      const position = ++this.state.position;
      this.state.changes.push(
        changeOf({
          position,
          type: e.type,
          id: e.plantId,
          body: e.body,
          tag: e.tag,
          oldTag: e.oldTag,
          time: e.createdAt,
        }),
      );
      return position;
    });
  }
}

function passes(p: PlantRecord, query: PlantListQuery): boolean {
  if (query.after !== undefined && p.id <= query.after) return false;
  if (query.tags !== undefined && !(p.tag !== undefined && query.tags.includes(p.tag))) return false;
  if (query.search !== undefined) {
    const words = new Set(searchWords(p.name));
    if (!query.search.every((w) => words.has(w))) return false;
  }
  return true;
}

export class MemoryStore implements Store {
  /** Its schema versions are counted as SQLite's: a backup of it restores into either kind. */
  readonly kind = 'sqlite' as const;
  readonly notice = undefined;
  readonly files = undefined;

  private state: State = { plants: new Map(), changes: [], floor: 1n, position: 0n };
  private readonly tokenRows = new Map<string, TokenRecord>();
  private readonly endpoints = new Map<string, WebhookEndpoint>();
  /** Transactions run one after the other, as SQLite's writer runs them. */
  private queue: Promise<unknown> = Promise.resolve();
  private fault: Error | undefined;
  private closed = false;
  private commits = 0;
  private writes = 0;
  private pending = 0;
  /** Every call a use-case made, by name (`plants.write`, `tokens.insert`, `reads`), in order. */
  readonly calls: string[] = [];

  /** Until `heal()`, every call rejects with `err` (a StoreUnavailableError by default), as an outage. */
  breakWith(err: Error = new StoreUnavailableError(undefined, 'the memory store is broken on purpose')): void {
    this.fault = err;
  }

  heal(): void {
    this.fault = undefined;
  }

  private check(call: string): void {
    this.calls.push(call);
    if (this.closed) throw new Error('the memory store is closed');
    if (this.fault) throw this.fault;
  }

  /** Runs `work` on a copy of the state, alone; the copy becomes the state when it resolves. */
  private transaction<T>(call: string, work: (s: State) => Promise<T>): Promise<T> {
    this.pending++;
    const run = this.queue.then(async () => {
      this.pending--;
      this.check(call);
      const next = copy(this.state);
      const result = await work(next);
      this.state = next;
      this.commits++;
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private apply(call: string, writes: PlantWrite[], allOrNothing: boolean): Promise<Written[]> {
    return this.transaction(call, async (s) => {
      const written = await applyWrites(writes, new MapTx(s), { allOrNothing });
      this.writes += writes.length;
      return written;
    }).then((written) => this.acknowledged.told(written));
  }

  readonly plants: PlantStore = {
    write: async (write) => (await this.apply('plants.write', [write], false))[0]!,
    writeAll: (writes) => this.apply('plants.writeAll', writes, false),
    writeBatch: (writes) => this.apply('plants.writeBatch', writes, true),
    settleAfterImport: async () => this.check('plants.settleAfterImport'),
    get: async (id) => {
      this.check('plants.get');
      return this.state.plants.get(id);
    },
    list: async (query, limit) => {
      this.check('plants.list');
      return [...this.state.plants.values()]
        .filter((p) => passes(p, query))
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .slice(0, limit);
    },
    count: async () => {
      this.check('plants.count');
      return this.state.plants.size;
    },
  };

  private readonly acknowledged = new Acknowledged();

  readonly changes: ChangeLog = {
    onWritten: (listener) => this.acknowledged.listen(listener),
    bounds: async (): Promise<LogBounds> => {
      this.check('changes.bounds');
      const current = this.state.position > this.state.floor - 1n ? this.state.position : this.state.floor - 1n;
      return { floor: this.state.floor, current };
    },
    read: async (after, upTo, limit, filter): Promise<ChangePage> => {
      this.check('changes.read');
      const end =
        filter.tags !== undefined && filter.id === undefined && after + SCAN_WINDOW < upTo ? after + SCAN_WINDOW : upTo;
      const changes = this.state.changes
        .filter((c) => c.position > after && c.position <= end)
        .filter((c) => filter.id === undefined || c.id === filter.id)
        .filter((c) => filter.tags === undefined || filter.tags.some((t) => t === c.tag || t === c.oldTag))
        .slice(0, limit);
      return { changes, scannedTo: changes.length === limit ? changes.at(-1)!.position : end };
    },
    prune: (before) =>
      this.transaction('changes.prune', async (s) => {
        const kept = s.changes.filter((c) => c.time >= before);
        const gone = s.changes.length - kept.length;
        s.changes = kept;
        s.floor = kept[0]?.position ?? s.position + 1n;
        return gone;
      }),
  };

  readonly tokens: TokenStore = {
    insert: async (token) => {
      this.check('tokens.insert');
      if (this.tokenRows.has(token.id) || [...this.tokenRows.values()].some((t) => t.hash === token.hash))
        throw new Error(`a token with id ${token.id} or its hash is already stored`);
      this.tokenRows.set(token.id, { ...token, scopes: [...token.scopes] });
    },
    findByHash: async (hash) => {
      this.check('tokens.findByHash');
      return [...this.tokenRows.values()].find((t) => t.hash === hash);
    },
    list: async () => {
      this.check('tokens.list');
      return [...this.tokenRows.values()].sort(
        (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1),
      );
    },
    count: async () => {
      this.check('tokens.count');
      return this.tokenRows.size;
    },
    revoke: async (id, at) => {
      this.check('tokens.revoke');
      const t = this.tokenRows.get(id);
      if (!t) return false;
      if (t.revokedAt === null) this.tokenRows.set(id, { ...t, revokedAt: at });
      return true;
    },
    insertTicket: async (ticket) => {
      this.check('tokens.insertTicket');
      this.tickets.set(ticket.hash, { ...ticket, scopes: [...ticket.scopes] });
    },
    findTicket: async (hash) => {
      this.check('tokens.findTicket');
      return this.tickets.get(hash);
    },
  };
  private readonly tickets = new Map<string, TicketRecord>();

  private readonly noOutbox = (name: string) => async (): Promise<never> => {
    throw new Error(`the memory store keeps no webhook deliveries (${name}): test that on a real store`);
  };

  readonly webhooks: WebhookStore = {
    insertEndpoint: async (endpoint) => {
      this.check('webhooks.insertEndpoint');
      if (this.endpoints.has(endpoint.id)) throw new Error(`endpoint ${endpoint.id} is already stored`);
      this.endpoints.set(endpoint.id, endpoint);
    },
    listEndpoints: async () => {
      this.check('webhooks.listEndpoints');
      return [...this.endpoints.values()].map(({ secret: _secret, ...endpoint }) => ({
        endpoint,
        pending: 0,
        delivered: 0,
        failed: 0,
        lastFailure: null,
        recent: [],
      }));
    },
    removeEndpoint: async (id) => {
      this.check('webhooks.removeEndpoint');
      return this.endpoints.delete(id);
    },
    findEndpoint: async (id) => {
      this.check('webhooks.findEndpoint');
      return this.endpoints.get(id);
    },
    endpointsDue: this.noOutbox('endpointsDue'),
    claimDeliveries: this.noOutbox('claimDeliveries'),
    recordAttempt: this.noOutbox('recordAttempt'),
    redeliver: this.noOutbox('redeliver'),
    countPendingDeliveries: async () => 0,
    pendingByEndpoint: async () => new Map([...this.endpoints.keys()].map((id) => [id, 0])),
  };

  async reads(): Promise<StoreReads> {
    this.check('reads');
    return this;
  }

  readHosts(): ReadHost[] {
    return [];
  }

  async migrate(): Promise<number> {
    return 0;
  }

  async ping(): Promise<StoreHealth> {
    this.check('ping');
    return {};
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  pendingWrites(): number {
    return this.pending;
  }

  writeStats(): { commits: number; writes: number } {
    return { commits: this.commits, writes: this.writes };
  }

  async openSnapshot(): Promise<StoreSnapshot> {
    this.check('openSnapshot');
    const rows: { [K in RecordKind]: BackedUp[K][] } = {
      tokens: [...this.tokenRows.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
      webhooks: [...this.endpoints.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
      plants: [...this.state.plants.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
    };
    const part = <R>(items: R[]) => ({
      async *pages() {
        if (items.length) yield items;
      },
    });
    const { position, floor } = this.state;
    const at = position > floor - 1n ? position : floor - 1n;
    return {
      schemaVersion: KNOWN_SCHEMA_VERSIONS[this.kind],
      records: { tokens: part(rows.tokens), webhooks: part(rows.webhooks), plants: part(rows.plants) },
      position: async () => at,
      close: async () => undefined,
    };
  }

  restoreInto<T>(work: (target: RestoreTarget) => Promise<T>): Promise<T> {
    return this.transaction('restoreInto', async (s) => {
      const tokens = new Map(this.tokenRows);
      const endpoints = new Map(this.endpoints);
      const part = <R>(map: Map<string, R> | Map<bigint, R>, key: (r: R) => string | bigint) => ({
        count: async () => map.size,
        insert: async (records: R[]) => {
          let n = 0;
          for (const r of records) {
            if ((map as Map<string | bigint, R>).has(key(r))) continue;
            (map as Map<string | bigint, R>).set(key(r), r);
            n++;
          }
          return n;
        },
      });
      const result = await work({
        records: {
          tokens: part(tokens, (t: TokenRecord) => t.id),
          webhooks: part(endpoints, (e: WebhookEndpoint) => e.id),
          plants: part(s.plants, (p: PlantRecord) => p.id),
        },
      });
      // A new log, past every position the old one reached.
      s.changes = [];
      s.floor = s.position + 1n;
      for (const [k, v] of tokens) this.tokenRows.set(k, v);
      for (const [k, v] of endpoints) this.endpoints.set(k, v);
      return result;
    });
  }
}
