import { StoreUnavailableError } from '../../domain/errors.js';
import { firstPast } from '../../domain/change.js';
import type { StandbyChange, StoreReads } from '../store.js';
import { CURRENT_POSITION, postgresChanges } from './changes.js';
import type { PostgresSettings } from './connection.js';
import { PlantReads } from './plant-reads.js';
import { PostgresPool } from './pool.js';
import type { Run } from './rows.js';

/** Why a standby is not used yet at start: nothing to compare it with (never told as such, see tellChanges). */
const PRIMARY_NOT_REACHED = 'the primary, to compare it with, has not been reached yet';

/** How often the primary's position and each standby's are looked at: one small statement each. */
export const LOOK_MS = 100;
/** A standby that takes longer than this to say where it is counts as unreachable. */
const LOOK_TIMEOUT_MS = 1_000;
/** Positions of the primary remembered to judge lag; past it the oldest are merged (see `sample`). */
const SAMPLES = 3_000;

/**
 * Where a database stands, and whose it is: a standby of this primary is in recovery and has the
 * primary's system identifier (the same initdb, copied by pg_basebackup). Another database (a
 * primary of its own, another cluster's standby, the old primary a failover left behind) may
 * hold a change log that looks right and is another store's.
 */
const POSITION = {
  text: `SELECT (${CURRENT_POSITION})::text AS p, pg_is_in_recovery() AS recovering,
                (SELECT system_identifier FROM pg_control_system())::text AS system`,
};

/** A missing table or schema: the database answers, and is not this store's. */
const NO_STORE = new Set(['42P01', '3F000']);

interface PositionRow {
  p: string;
  recovering: boolean;
  system: string;
}

/** The primary's reads, and what a standby's read that failed falls back to. */
export interface PrimaryReads {
  reads: StoreReads;
  /** Statements on the primary. */
  run: Run;
  /** A read a standby could not make was sent to the primary (counted there). */
  tookOver(): void;
}

/**
 * One standby of DATABASE_READ_URL: its own pool, its reads, and the last position it was seen
 * to have replayed. The change log's positions are taken in commit order on the primary
 * (changes.ts, LOCK), and a standby replays the WAL in commit order: a standby whose log reaches
 * position P shows every change up to P, and nothing of a later commit is missing below it.
 */
class Standby {
  private readonly pool: PostgresPool;
  /** The last position seen replayed here; every change up to it is visible here from then on. */
  position: bigint | undefined;
  /** It answered its last look, and no read failed on it since. */
  reachable = false;
  /** Reads sent here since start. */
  served = 0;
  /** Its last look's system identifier, and whether it was in recovery (a standby). */
  identity: { system: string; recovering: boolean } | undefined;
  /** Its last look found no change log where the store keeps it. */
  holdsNoStore = false;
  /** A position it was seen at past the primary's, asked after it: forgotten once it moves. */
  aheadAt: bigint | undefined;
  /**
   * A whole look has compared it with the primary: until then a standby past the primary (a
   * failover that lost writes) would serve reads while the primary is asked again.
   */
  judged = false;
  readonly reads: StoreReads;
  private looking: Promise<bigint | undefined> | undefined;

  constructor(
    readonly host: string,
    settings: PostgresSettings,
    poolSize: number,
    primary: PrimaryReads,
  ) {
    this.pool = new PostgresPool(settings);
    const plants = new PlantReads(this.pool.run, poolSize);
    const log = postgresChanges(this.pool.run);
    // A read this standby cannot make (stopped, cut off, a query cancelled by replay) is made on
    // the primary: the client gets its answer, and the standby is left out until a look finds it.
    const or =
      <A extends unknown[], R>(here: (...a: A) => Promise<R>, there: (...a: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          return await here(...args);
        } catch (err) {
          if (!(err instanceof StoreUnavailableError)) throw err;
          this.reachable = false;
          primary.tookOver();
          return there(...args);
        }
      };
    const p = primary.reads;
    this.reads = {
      plants: {
        get: or(
          (id) => plants.get(id),
          (id) => p.plants.get(id),
        ),
        list: or(
          (query, limit) => plants.list(query, limit),
          (query, limit) => p.plants.list(query, limit),
        ),
      },
      changes: {
        bounds: or(
          () => log.bounds(),
          () => p.changes.bounds(),
        ),
        // Up to the position it was seen at: `upTo` is the primary's, and past what it is known
        // to have replayed, a page would say it had looked at changes the standby may lack. The
        // reader goes on from there (the page says more follow).
        read: or(
          (after, upTo, limit, filter) => {
            const seen = this.position;
            if (seen === undefined || seen <= after) return p.changes.read(after, upTo, limit, filter);
            return log.read(after, seen < upTo ? seen : upTo, limit, filter);
          },
          (after, upTo, limit, filter) => p.changes.read(after, upTo, limit, filter),
        ),
      },
    };
  }

  /**
   * Where it is now: one statement, shared by whoever asks meanwhile (the timer, reads that need
   * a position it was not yet seen at). No answer within LOOK_TIMEOUT_MS: unreachable.
   */
  look(): Promise<bigint | undefined> {
    this.looking ??= this.pool
      .run<PositionRow>(POSITION)
      .then(
        ([row]) => {
          this.position = BigInt(row!.p);
          this.identity = { system: row!.system, recovering: row!.recovering };
          this.holdsNoStore = false;
          if (this.aheadAt !== this.position) this.aheadAt = undefined;
          this.reachable = true;
          return this.position;
        },
        (err: unknown) => {
          // It answered, without this store's change log: some other database, no standby of it.
          this.holdsNoStore = NO_STORE.has((err as { code?: unknown }).code as string);
          this.reachable = this.holdsNoStore;
          return undefined;
        },
      )
      .finally(() => (this.looking = undefined));
    let timer: NodeJS.Timeout | undefined;
    const slow = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        this.reachable = false;
        resolve(undefined);
      }, LOOK_TIMEOUT_MS);
    });
    return Promise.race([this.looking, slow]).finally(() => clearTimeout(timer));
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

/** A position the primary was seen at, and a time before which it had not reached it. */
interface Sample {
  position: bigint;
  passedAfter: number;
}

/**
 * The standbys of DATABASE_READ_URL: where each stands, and which one a read may go to.
 *
 * Every LOOK_MS each standby is asked its position, and the primary its own. A standby's lag is
 * judged from the primary's positions over time: the time since the primary first passed what
 * the standby has replayed (0 when it has everything). That stays right when the primary is
 * idle, where the time of the last transaction replayed (pg_last_xact_replay_timestamp) would
 * grow without a standby falling behind. It errs on the high side only: the standby may have
 * replayed more since it was looked at, and the primary is taken to have passed a position at its
 * look before the one that saw it passed.
 */
export class Standbys {
  private readonly standbys: Standby[];
  /** The primary's positions, ascending, each with the time of the look before the one that saw it. */
  private samples: Sample[] = [];
  private lastLook: number | undefined;
  /** The primary's system identifier, from its last look. */
  private primarySystem: string | undefined;
  private lookingAtPrimary = false;
  private timer: NodeJS.Timeout | undefined;
  private turn = 0;

  constructor(
    hosts: { host: string; settings: PostgresSettings }[],
    poolSize: number,
    private readonly maxLagMs: number,
    private readonly primary: PrimaryReads,
  ) {
    this.standbys = hosts.map(({ host, settings }) => new Standby(host, settings, poolSize, primary));
  }

  start(): void {
    this.timer = setInterval(() => void this.lookAll(), LOOK_MS);
    this.timer.unref();
    void this.lookAll();
  }

  private async lookAll(): Promise<void> {
    await Promise.all([this.lookAtPrimary(), ...this.standbys.map((s) => s.look())]);
    // A standby past the primary may only have been looked at after it: the primary is asked
    // again. Past what the primary has then, the standby holds changes the primary never made: an
    // old primary's that a failover lost, replayed by a standby that was not promoted.
    const past = (primary: bigint) => this.standbys.filter((s) => s.position !== undefined && s.position > primary);
    const last = this.samples.at(-1)?.position;
    if (last !== undefined && past(last).length > 0) {
      const now = await this.primaryNow();
      if (now !== undefined) for (const s of past(now)) s.aheadAt = s.position;
    }
    // Judged once the primary's position was known to compare with.
    if (this.samples.length > 0) for (const s of this.standbys) if (s.position !== undefined) s.judged = true;
    this.tellChanges();
  }

  /** The primary's position, asked now; undefined when it does not answer. */
  private async primaryNow(): Promise<bigint | undefined> {
    const sent = Date.now();
    try {
      const [row] = await this.primary.run<PositionRow>(POSITION);
      this.primarySystem = row!.system;
      this.sample(BigInt(row!.p), sent);
      return BigInt(row!.p);
    } catch {
      return undefined;
    }
  }

  /** Listeners told when a standby is left out of the reads or serves them again. */
  private readonly listeners: ((change: StandbyChange) => void)[] = [];
  /** What each standby was last told as; none until known (a first look's lag is not). */
  private readonly told = new Map<Standby, boolean>();
  /** The standbys left out, as last told: a listener that comes after the first looks hears of them. */
  private readonly leftOut = new Map<Standby, StandbyChange>();

  onChange(listener: (change: StandbyChange) => void): void {
    this.listeners.push(listener);
    for (const change of this.leftOut.values()) listener(change);
  }

  /**
   * After each look: a standby that became usable or stopped being so is told once. At start
   * nothing is told of one that serves reads, nor of one whose lag is not known yet (the first
   * look cannot date what it lacks), nor of any before the primary has been reached (what it
   * would be compared with is not known): only of one left out for a reason known. Told once, a
   * reason that was only "not known yet" would have been the one line an operator sees.
   */
  private tellChanges(): void {
    const now = Date.now();
    for (const s of this.standbys) {
      const usable = this.usable(s);
      const before = this.told.get(s);
      if (usable === before) continue;
      const lag = this.lagMs(s, now);
      const stranger = s.reachable ? this.stranger(s) : undefined;
      if (before === undefined && stranger === PRIMARY_NOT_REACHED) continue;
      if (before === undefined && !stranger && (usable || (s.reachable && lag === Infinity))) {
        if (usable) this.told.set(s, true);
        continue;
      }
      this.told.set(s, usable);
      const behind = lag === Infinity ? 'its lag is not known' : `${(lag / 1000).toFixed(1)} s behind`;
      const why = !s.reachable
        ? 'unreachable'
        : (stranger ?? `${behind}, past DATABASE_READ_MAX_LAG (${this.maxLagMs / 1000} s)`);
      const change: StandbyChange = { host: s.host, usable, ...(!usable && { why }) };
      if (usable) this.leftOut.delete(s);
      else this.leftOut.set(s, change);
      for (const listener of this.listeners) listener(change);
    }
  }

  private async lookAtPrimary(): Promise<void> {
    if (this.lookingAtPrimary) return;
    this.lookingAtPrimary = true;
    const sent = Date.now();
    try {
      const [row] = await this.primary.run<PositionRow>(POSITION);
      this.primarySystem = row!.system;
      this.sample(BigInt(row!.p), sent);
    } catch {
      // The primary's outage is the writes' and /readyz's to report; lags are judged from the
      // positions it was last seen at.
    } finally {
      this.lookingAtPrimary = false;
    }
  }

  private sample(position: bigint, sent: number): void {
    const last = this.samples.at(-1);
    // A log that went back (a restore starts a new one) makes what was remembered meaningless.
    if (last !== undefined && position < last.position) this.samples = [];
    if (last === undefined || position > last.position) {
      // First seen now: reached after the look before. At the very first look, when it was
      // reached is not known: a standby behind it is taken as too far behind until it passes it.
      this.samples.push({ position, passedAfter: this.lastLook ?? -Infinity });
    }
    this.lastLook = sent;
    if (this.samples.length > SAMPLES) {
      // The two oldest become one, with the earlier time: a standby that far behind is judged
      // further behind, never less.
      this.samples[1]!.passedAfter = this.samples[0]!.passedAfter;
      this.samples.shift();
    }
  }

  /** How far behind the primary `s` is, in ms; Infinity when not known. */
  private lagMs(s: Standby, now = Date.now()): number {
    const at = s.position;
    if (at === undefined) return Infinity;
    // The first position the primary was seen at that the standby lacks.
    const missing = this.samples[firstPast(this.samples, at)];
    return missing === undefined ? 0 : Math.max(0, now - missing.passedAfter);
  }

  /**
   * Why `s` is no standby of this primary, or undefined when it is (or is not known yet not to
   * be: it is not usable before its first look anyway). Its reads would be another store's.
   */
  private stranger(s: Standby): string | undefined {
    if (s.holdsNoStore) return 'it holds no plant store (no change log in its schema): no standby of this primary';
    if (!s.identity) return undefined;
    if (!s.identity.recovering) return 'it is not a standby (not in recovery): another primary, not this one';
    if (this.primarySystem === undefined) return PRIMARY_NOT_REACHED;
    if (s.identity.system !== this.primarySystem) {
      return `it is a standby of another cluster (system identifier ${s.identity.system}, the primary's ${this.primarySystem})`;
    }
    if (s.aheadAt !== undefined) {
      return "its change log is past the primary's: changes this primary never made (writes a failover lost?)";
    }
    return undefined;
  }

  private usable(s: Standby): boolean {
    return s.judged && s.reachable && this.stranger(s) === undefined && this.lagMs(s) <= this.maxLagMs;
  }

  /**
   * The reads of a standby that may serve a read needing every change up to `atLeast`, or
   * undefined (the primary's turn). One known to have replayed it, in turn; when none is known
   * to yet (a write acknowledged a moment ago), the most advanced is asked where it is now, once.
   */
  async choose(atLeast?: bigint): Promise<StoreReads | undefined> {
    const usable = this.standbys.filter((s) => this.usable(s));
    if (usable.length === 0) return undefined;
    const ready = atLeast === undefined ? usable : usable.filter((s) => s.position! >= atLeast);
    let chosen = ready[this.turn++ % Math.max(1, ready.length)];
    if (chosen === undefined) {
      const best = usable.reduce((a, b) => (b.position! > a.position! ? b : a));
      const now = await best.look();
      if (now !== undefined && now >= atLeast! && this.usable(best)) chosen = best;
    }
    if (chosen === undefined) return undefined;
    chosen.served++;
    return chosen.reads;
  }

  /** Each standby: reads sent to it, lag, and whether reads may go to it now. */
  stats(): { host: string; reads: number; lagMs: number; usable: boolean }[] {
    const now = Date.now();
    return this.standbys.map((s) => ({
      host: s.host,
      reads: s.served,
      lagMs: this.lagMs(s, now),
      usable: this.usable(s),
    }));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.standbys.map((s) => s.end()));
  }
}
