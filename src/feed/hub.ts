import { firstPast, matches, type Change, type ChangeFilter, type LogBounds } from '../domain/change.js';
import type { ChangeLog } from '../store/changes.js';

/** How often an instance looks at the log for changes committed elsewhere (another instance, a command). */
export const POLL_MS = 200;
/** The latest changes held in memory, where the streams and long polls that keep up read them. */
const RING = 8192;
/**
 * How far past RING it grows before the oldest are let go, together: cutting the array's front
 * at every read of new changes moved 8,192 entries each time, 1.5% of the CPU of a write load
 * while anything followed the log (a profile of the process, `perf`).
 */
const RING_SLACK = 2048;
/** One read of the tail: past this many rows behind, the ring starts afresh and readers read the store. */
const TAIL_PAGE = 1000;
const TAIL_PAGES = 4;
const PRUNE_EVERY_MS = 3_600_000;

interface Waiter {
  /** Every change up to here is known not to pass its filter (or it waits past it). */
  after: bigint;
  filter: ChangeFilter;
  wake: () => void;
}

/**
 * One instance's view of the change log's end. It learns of new changes from this instance's
 * writes (`saw`, as soon as each is acknowledged) and from a look at the log every POLL_MS (the
 * writes of other instances and commands), reads each new change from the store once, keeps the
 * latest in memory and wakes whoever waits past a position: every stream and long poll of the
 * instance shares one read of the store per change, whatever their number. It also prunes the
 * log past its retention.
 */
export class ChangeHub {
  /** Every change up to here is committed (and durable) and has been read into `ring`, or is past it. */
  private head = 0n;
  private lowest = 1n;
  /** The changes in (ringFrom, current], in position order. */
  private ring: Change[] = [];
  private ringFrom = 0n;
  private waiters = new Set<Waiter>();
  private target = 0n;
  private reading: Promise<void> | undefined;
  private timers: NodeJS.Timeout[] = [];
  private failed = false;
  /** Open streams, which read from memory: while there are none, and no waiter, nothing is read. */
  private following = 0;
  private stopHearing: (() => void) | undefined;
  private readonly advanced = new Set<() => void>();
  /** Moves on at each restart: work begun on the log as it was before finds its result out of date. */
  private generation = 0;
  /** Between a restart and a read of the log's end that succeeded: `current` stands for nothing. */
  private stale = false;
  private readonly resets = new Set<() => void>();

  constructor(
    private readonly log: ChangeLog,
    private readonly options: { retentionMs: number; onError: (err: unknown, what: string) => void },
  ) {}

  /**
   * Stopped: what it had under way when the store closed (the first prune, started with it, when
   * a start fails at listen) fails, and is not an error any more.
   */
  private stopped = false;

  /** Every change up to here is committed (and durable) and has been read into memory, or is past it. */
  get current(): bigint {
    return this.head;
  }

  /** The oldest position the log keeps, as this instance last saw it. */
  get floor(): bigint {
    return this.lowest;
  }

  /**
   * A follower (an open stream) reads from memory from now on: the hub reads each new change
   * while there is one. Call the result, once, when it stops.
   */
  follow(): () => void {
    this.following++;
    let followed = true;
    return () => {
      if (!followed) return;
      followed = false;
      this.following--;
    };
  }

  async start(): Promise<void> {
    // This instance's writes, as each is acknowledged, wherever it was made (a route, a command).
    this.stopHearing ??= this.log.onWritten((position) => this.saw(position));
    const bounds = await this.log.bounds();
    this.lowest = bounds.floor;
    this.head = this.ringFrom = this.target = bounds.current;
    this.log.onReplaced?.(() => this.restart('the database primary changed'));
    const poll = setInterval(() => void this.look(), POLL_MS);
    const prune = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    for (const t of [poll, prune]) t.unref();
    this.timers = [poll, prune];
    void this.prune();
  }

  stop(): void {
    this.stopped = true;
    this.stopHearing?.();
    this.stopHearing = undefined;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    for (const w of this.waiters) w.wake();
    this.waiters.clear();
  }

  /**
   * The last position known committed: `current`, or past it while the hub is still reading the
   * changes up to it (a write just acknowledged here, a look at the log that found more).
   */
  get known(): bigint {
    return this.target > this.head ? this.target : this.head;
  }

  /** A write of this instance was acknowledged at `position`: every change up to it is committed. */
  private saw(position: bigint): void {
    if (position > this.target) this.target = position;
    if (this.head >= this.target) return;
    if (this.following > 0 || this.waiters.size > 0) {
      void this.catchUp();
      return;
    }
    // Nobody follows: the changes are not read; a reader that comes reads them from the store.
    if (this.reading) return;
    this.ring = [];
    this.head = this.ringFrom = this.target;
  }

  /** Called once each time `current` moves on (the streams write what is new). */
  onAdvance(listener: () => void): () => void {
    this.advanced.add(listener);
    return () => this.advanced.delete(listener);
  }

  /**
   * Called when this instance forgets what it held of the log (restart): the streams it feeds
   * hold positions of the log as it was, and are closed so that their readers resume.
   */
  onReset(listener: () => void): () => void {
    this.resets.add(listener);
    return () => this.resets.delete(listener);
  }

  /** The log's bounds as the store has them now (a position past what this instance has seen). */
  async bounds(): Promise<LogBounds> {
    const [known, generation] = [this.known, this.generation];
    const bounds = await this.log.bounds();
    // Everything known before the read was committed before it began: a log that ends before it
    // is another history (a failover lost the end of the one this instance followed).
    if (bounds.current < known && generation === this.generation) {
      this.restart(`the change log ends at ${bounds.current}, before ${known}, the last position this instance saw`);
    }
    this.lowest = bounds.floor > this.lowest ? bounds.floor : this.lowest;
    this.saw(bounds.current);
    return bounds;
  }

  /** Every change after `after` up to `current`, from memory; undefined when memory does not reach back that far. */
  recent(after: bigint): Change[] | undefined {
    if (after < this.ringFrom) return undefined;
    return this.ring.slice(firstPast(this.ring, after));
  }

  /**
   * Resolves once `current` is past `after` with a change that passes `filter` (or one the ring no
   * longer holds, which the waiter must read from the store), after `ms`, or when `signal` aborts:
   * whichever comes first. A change the filter refuses wakes nobody: under a write load of other
   * tags, a long poll filtered on a quiet one would otherwise read again at every write.
   */
  waitPast(after: bigint, ms: number, signal?: AbortSignal, filter: ChangeFilter = {}): Promise<void> {
    if (this.head > after || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = { after, filter, wake: () => done() };
      const timer = setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(waiter);
        resolve();
      };
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(waiter);
    });
  }

  private async look(): Promise<void> {
    try {
      // A restart whose read of the log's end failed reads it again, and nothing else meanwhile.
      if (this.stale) await this.reloading();
      else await this.bounds();
      if (this.failed) this.failed = false;
    } catch (err) {
      // Said once per outage, not every POLL_MS.
      if (!this.failed && !this.stopped) this.options.onError(err, 'could not look at the change log');
      this.failed = true;
    }
  }

  /** Reads the changes up to `target` into memory, one read at a time, then wakes the waiters past them. */
  private catchUp(): Promise<void> {
    const generation = this.generation;
    this.reading ??= (async () => {
      try {
        for (let pages = 0; this.head < this.target; pages++) {
          if (pages === TAIL_PAGES || (this.following === 0 && this.waiters.size === 0)) {
            // Far behind, or nobody left to read for: readers that need what is skipped read
            // it from the store.
            this.ring = [];
            this.head = this.ringFrom = this.target;
            break;
          }
          const page = await this.readOn();
          if (generation !== this.generation) return;
          if (page === undefined) return this.restart('the change log holds another change at a position read before');
          this.append(page.changes, page.scannedTo);
        }
      } catch (err) {
        if (generation === this.generation) this.options.onError(err, 'could not read the change log');
      } finally {
        if (generation === this.generation) {
          this.reading = undefined;
          this.wake();
        }
      }
    })();
    return this.reading;
  }

  /**
   * The next page past `current`. It starts at the change at `current` when memory holds it, and
   * answers undefined when the log has another change there: the log is not the one read before
   * (another primary's, since a failover), and nothing of this instance's memory may be served.
   * One row more per read of new changes: the check costs no round trip of its own.
   */
  private async readOn(): Promise<{ changes: Change[]; scannedTo: bigint } | undefined> {
    const last = this.ring.at(-1);
    const held = last?.position === this.head ? last : undefined;
    const page = await this.log.read(held ? this.head - 1n : this.head, this.target, TAIL_PAGE, {});
    const [first] = page.changes;
    // None there any more: pruned since (a log of positions that follow each other has no gap).
    if (held === undefined || first?.position !== held.position) return page;
    if (first.json !== held.json) return undefined;
    return { changes: page.changes.slice(1), scannedTo: page.scannedTo };
  }

  /**
   * Forgets what this instance holds of the log (the changes in memory, its end, its floor, what it
   * was about to read) and reads the log's end again from the store: after a failover, the
   * positions past what the new primary had are given to its own changes, and the old primary's
   * changes this instance held must never be served for them. Until that read is done, `current`
   * is 0 and the known end `target`: every reader asks the store. The streams close (onReset).
   */
  private restart(why: string): void {
    // Stopped (the server closing): nothing follows the log any more.
    if (this.timers.length === 0) return;
    this.generation++;
    this.ring = [];
    this.head = this.ringFrom = this.target = 0n;
    this.lowest = 1n;
    this.stale = true;
    this.options.onError(new Error(why), 'forgot the change log held in memory: reading it again from the store');
    for (const listener of this.resets) listener();
    this.reloading().catch((err: unknown) => this.options.onError(err, 'could not read the change log'));
  }

  /**
   * After a restart: reads the log's end (or takes a write's acknowledged since, past it). It
   * stands as `reading` meanwhile, and after a failure until the next look: nothing reads on
   * from a `current` of 0.
   */
  private reloading(): Promise<void> {
    const generation = this.generation;
    const done = (async () => {
      const bounds = await this.log.bounds();
      // Another restart since, or another read of this one's (a look's) that came first.
      if (generation !== this.generation || !this.stale) return;
      this.lowest = bounds.floor;
      this.ring = [];
      this.head = this.ringFrom = this.target = bounds.current > this.target ? bounds.current : this.target;
      this.stale = false;
      this.reading = undefined;
      this.wake();
    })();
    this.reading = done.catch(() => undefined);
    return done;
  }

  private append(changes: Change[], upTo: bigint): void {
    this.ring.push(...changes);
    if (this.ring.length > RING + RING_SLACK) {
      const dropped = this.ring.splice(0, this.ring.length - RING);
      this.ringFrom = dropped.at(-1)!.position;
    }
    this.head = upTo;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters) {
      if (this.head <= w.after) continue;
      if (this.passes(w.after, w.filter)) w.wake();
      // Nothing for it up to here: the next wake looks only at what follows.
      else w.after = this.head;
    }
    for (const listener of this.advanced) listener();
  }

  /** Whether a change after `after` passes `filter`: true too when memory does not reach back that far. */
  private passes(after: bigint, filter: ChangeFilter): boolean {
    if (after < this.ringFrom) return true;
    for (let i = firstPast(this.ring, after); i < this.ring.length; i++)
      if (matches(this.ring[i]!, filter)) return true;
    return false;
  }

  private async prune(): Promise<void> {
    try {
      await this.log.prune(Date.now() - this.options.retentionMs);
      const { floor } = await this.log.bounds();
      if (floor > this.lowest) this.lowest = floor;
    } catch (err) {
      if (!this.stopped) this.options.onError(err, 'could not prune the change log');
    }
  }
}
