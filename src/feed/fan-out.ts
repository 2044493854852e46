import { matches, type Change, type ChangeFilter } from '../domain/change.js';
import { ForbiddenError, UnauthenticatedError, UnavailableError } from '../domain/errors.js';
import { readAfter, type Feed } from './read.js';

/** A comment line at least this often keeps proxies from closing an idle stream (the product says 15 s). */
export const HEARTBEAT_MS = 10_000;
/**
 * The streams take their keep-alives in this many turns over HEARTBEAT_MS, each stream in its own:
 * 10,000 written in one turn held every request and every change behind them for 150 ms.
 */
const HEARTBEAT_SLOTS = 10;
/** How often the credentials of open streams are checked again: revoked or expired, closed within a second. */
export const RECHECK_MS = 250;
/** A stream whose reader leaves this much unread is closed: its reader resumes with Last-Event-ID. */
export const MAX_UNREAD_BYTES = 1024 * 1024;
/**
 * A reader that takes nothing for this long while events wait for it is closed too: the stream
 * stops writing once the socket's buffer is full, so a stalled reader holds no more memory, but
 * it holds a stream of CHANGES_MAX_STREAMS and falls further behind.
 */
export const STALL_MS = 5_000;
/**
 * New changes are written to the streams this long after the first of them: under a write load
 * each stream gets one write of every change of the moment, not one per change.
 */
const FLUSH_MS = 15;
/** Changes written per read of the store, for a stream behind what the hub holds in memory. */
const BATCH = 500;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Where a stream's events go: the edge's response (http/streams/change-streams.ts). The fan-out hands it
 * bytes and watches how many its reader has left unread; it knows nothing of the protocol.
 */
export interface Sink {
  /** Hands `text` to the reader; false when its buffers are full (wait for `drained`). */
  write(text: string): boolean;
  /** Bytes handed over that the reader has not taken yet. */
  readonly buffered: number;
  /** Resolves once the reader has taken what it was handed, or the sink is closed. */
  drained(): Promise<void>;
  /** Ends the stream: at once (`now`, its unread bytes dropped) or after what it was handed. */
  close(now: boolean): void;
}

/** The client a place is held for: the edge says when it leaves (its socket or response closes). */
export interface Client {
  readonly gone: boolean;
  /** Calls `leave` when the client goes; the result stops listening. */
  onLeave(leave: () => void): () => void;
}

/** How a change and a heartbeat are written to a stream (Server-Sent Events, at the edge). */
export interface Framing {
  event(change: Change): string;
  readonly heartbeat: string;
  /** A position with no change: the reader resumes from it (an `id:` with no data). */
  bookmark(position: bigint): string;
}

/**
 * One of the CHANGES_MAX_STREAMS places, taken by a request before it waits for anything (its
 * starting point, the store): it is given back when the stream it became closes, or as soon as
 * its client leaves, whatever the request is doing then. A client that leaves while its request
 * waits is noticed by the socket's close, never by a write: a filtered stream may never be
 * written to, and a place kept for a client gone is kept for good.
 */
export class Place {
  /** Made when a request asks for the signal (a long poll): a stream never does, and holds none. */
  private left: AbortController | undefined;
  private released = false;
  private readonly stopListening: () => void;
  /** Why it was taken back from a client still there: its credential no longer grants the feed. */
  refusal: Error | undefined;
  /**
   * Why it was taken back before its stream opened: another principal took it (fair share). The
   * request answers this (503), rather than a connection reset.
   */
  evictedBy: Error | undefined;
  /** The stream it became, which the client's leaving closes. */
  stream: Stream | undefined;

  constructor(
    /** Who holds it: the principal's limit key, never the raw credential. */
    readonly holder: string,
    /** The bearer credential it was taken with, checked again every RECHECK_MS while it is held. */
    readonly credential: string,
    private readonly client: Client,
    // The streams it was taken from (not a closure over them: one less object per idle stream).
    private readonly owner: { giveBack(place: Place): void },
  ) {
    this.stopListening = client.onLeave(this.onLeave);
    if (this.gone) this.onLeave();
  }

  /** Aborts when the client leaves (or the place is given back). */
  get signal(): AbortSignal {
    this.left ??= new AbortController();
    if (this.released) this.left.abort();
    return this.left.signal;
  }

  /** The client is gone: nothing it asked for can reach it any more. */
  get gone(): boolean {
    return this.released || this.client.gone;
  }

  /** Gives the place back (once); the stream it became, if any, is closed by its owner. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.stopListening();
    this.left?.abort();
    this.owner.giveBack(this);
  }

  /** Takes it back for another principal's request. */
  evict(err: Error): void {
    this.evictedBy = err;
    this.release();
  }

  /** Takes it back: the credential it was taken with is refused now (revoked, expired). */
  refuse(err: Error): void {
    this.refusal = err;
    this.release();
  }

  private readonly onLeave = (): void => this.release();
}

interface Stream {
  place: Place;
  sink: Sink;
  /** Its registration with the hub as a follower, undone when it closes. */
  unfollow: () => void;
  filter: ChangeFilter;
  /** The filter as text: streams with equal keys are sent the same events (`flush`). */
  filterKey: string;
  /** Every change up to here has been written to it (or passed over by its filter). */
  after: bigint;
  /** Where its reader would resume from: the last event's position or bookmark written, or where it began. */
  told: bigint;
  /** Reading the store (behind the hub's memory) or waiting for its reader: the flush leaves it. */
  busy: boolean;
  closed: boolean;
  /** The turn of the keep-alives it takes its own in (HEARTBEAT_SLOTS). */
  slot: number;
  /** The group it waits in while nothing passes its filter: its position is the group's. */
  parkedIn: Parked | undefined;
}

/**
 * Streams with one filter, at one position, that the last flush found nothing to send: a flush
 * moves them on together while nothing new passes their filter, instead of visiting each. 10,000
 * streams of a tag nobody wrote were visited by every flush under a write load: a tenth of the
 * serving thread.
 */
interface Parked {
  key: string;
  filter: ChangeFilter;
  at: bigint;
  streams: Set<Stream>;
}

export interface StreamOptions {
  max: number;
  /** Rejects when the credential no longer grants the operation (revoked, expired). */
  verify: (credential: string) => Promise<unknown>;
  onError: (err: unknown) => void;
  framing: Framing;
}

/** The events of some changes, and the last change they cover: all of them when `through` is undefined. */
interface Slice {
  text: string;
  bytes: number;
  through: bigint | undefined;
  /** The position of the last event in `text`. */
  last: bigint | undefined;
}

/**
 * The events of the `changes` that pass `filter`, as many as `room` bytes hold (at least one):
 * a stream is never handed more than it may leave unread, however far behind it is.
 */
function sliceOf(
  eventOf: (c: Change) => string,
  changes: readonly Change[],
  filter: ChangeFilter,
  room: number,
): Slice {
  let text = '';
  let bytes = 0;
  let last: bigint | undefined;
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i]!;
    if (!matches(c, filter)) continue;
    const event = eventOf(c);
    const size = Buffer.byteLength(event);
    if (bytes > 0 && bytes + size > room) return { text, bytes, through: changes[i - 1]!.position, last };
    text += event;
    bytes += size;
    last = c.position;
  }
  return { text, bytes, through: undefined, last };
}

/**
 * The open streams of the change feed on this instance (`GET /plants/changes` as Server-Sent
 * Events, framed at the edge). The hub (hub.ts) reads each new change from the store once; a flush then writes what is new to
 * every stream that keeps up, the text of the events built once for all the streams at one
 * position without a filter. A stream behind what the hub holds reads the store by pages until
 * it is back. A reader that falls behind is closed, never buffered without bound; a credential
 * that stops being valid closes its streams; closing the server ends them all.
 */
export class ChangeStreams {
  private readonly streams = new Set<Stream>();
  /** The streams a flush visits: every stream but those parked. */
  private readonly active = new Set<Stream>();
  /** The parked streams' groups, by filter. */
  private readonly parked = new Map<string, Parked>();
  private readonly timers: NodeJS.Timeout[];
  private readonly stopFollowing: () => void;
  private readonly stopResets: () => void;
  private flushTimer: NodeJS.Timeout | undefined;
  /** The keep-alives' turn: each stream takes its own every HEARTBEAT_SLOTS of them. */
  private heartbeatTurn = 0;
  /** The slot the next stream opened takes. */
  private nextSlot = 0;
  private checking = false;
  /** The last catch-up read in turn (inTurn), and the turn of the event loop after it. */
  private catchingUp: Promise<unknown> = Promise.resolve();
  /** Every place taken: streams open, and requests admitted that are not yet streams. */
  private readonly places = new Set<Place>();
  /** The places each principal holds: none holds more than `share`. */
  private readonly byHolder = new Map<string, number>();

  constructor(
    private readonly feed: Feed,
    private readonly options: StreamOptions,
  ) {
    this.timers = [
      setInterval(() => this.heartbeat(), HEARTBEAT_MS / HEARTBEAT_SLOTS),
      setInterval(() => void this.recheck(), RECHECK_MS),
    ];
    for (const t of this.timers) t.unref();
    this.stopFollowing = feed.hub.onAdvance(() => this.scheduleFlush());
    // The hub forgot the log it fed them (a failover): their readers resume on the log as it is
    // now, or are told to list again when they saw changes past its end.
    this.stopResets = feed.hub.onReset(() => {
      for (const s of this.streams) this.close(s);
    });
  }

  get size(): number {
    return this.streams.size;
  }

  /** The places taken: open streams, and requests admitted that are not yet streams. */
  get held(): number {
    return this.places.size;
  }

  /**
   * Takes a place for a stream about to open, or refuses past CHANGES_MAX_STREAMS before anything
   * is sent; the place is held while its starting point is read, so requests that come together
   * cannot all pass. `open` fills it; it is given back when the request fails (`release`), when
   * the stream closes, or when the client leaves, at any point.
   */
  admit(holder: string, credential: string, client: Client): Place {
    if (this.places.size >= this.options.max && !this.makeRoomFor(holder)) throw this.full();
    const place = new Place(holder, credential, client, this);
    if (!place.gone) {
      this.places.add(place);
      this.byHolder.set(holder, (this.byHolder.get(holder) ?? 0) + 1);
    }
    return place;
  }

  /** The refusal of a request that has no place, or lost the one it had before its stream opened. */
  private full(): UnavailableError {
    return new UnavailableError(
      `this instance has its most change streams and long polls (${this.options.max}); retry later`,
      5,
    );
  }

  /**
   * Every place is taken: a principal holding less than its fair share (the places over the
   * principals holding one, itself counted) takes the oldest place of the one holding the most,
   * which holds more than its share: that stream ends (its reader resumes with Last-Event-ID) or
   * that long poll answers now. So one token may use every place while nobody else asks, and
   * never keeps more than its share from another that does.
   */
  private makeRoomFor(holder: string): boolean {
    const holders = this.byHolder.size + (this.byHolder.has(holder) ? 0 : 1);
    const share = Math.max(1, Math.floor(this.options.max / holders));
    if ((this.byHolder.get(holder) ?? 0) >= share) return false;
    let most: string | undefined;
    for (const [h, n] of this.byHolder) if (most === undefined || n > this.byHolder.get(most)!) most = h;
    if (most === undefined || this.byHolder.get(most)! <= share) return false;
    // The set keeps the order places were taken in: the first of `most`'s is its oldest.
    for (const place of this.places) {
      if (place.holder !== most) continue;
      if (place.stream) this.close(place.stream);
      place.evict(this.full());
      return true;
    }
    return false;
  }

  /**
   * Feeds `sink`, the place's stream, from `after` on until it closes. A client that left while
   * its starting point was read has given its place back already: nothing opens.
   */
  open(place: Place, sink: Sink, after: bigint, filter: ChangeFilter): void {
    if (place.gone) return;
    const unfollow = this.feed.hub.follow();
    const filterKey =
      filter.id !== undefined ? `id ${filter.id}` : filter.tags ? `tags ${JSON.stringify(filter.tags)}` : '';
    const slot = (this.nextSlot = (this.nextSlot + 1) % HEARTBEAT_SLOTS);
    const stream: Stream = {
      place,
      sink,
      unfollow,
      filter,
      filterKey,
      after,
      told: after,
      busy: false,
      closed: false,
      slot,
      parkedIn: undefined,
    };
    place.stream = stream;
    this.streams.add(stream);
    this.active.add(stream);
    this.scheduleFlush();
  }

  /** Called by the place itself when it is released. */
  giveBack(place: Place): void {
    if (this.places.delete(place)) {
      const n = this.byHolder.get(place.holder)! - 1;
      if (n === 0) this.byHolder.delete(place.holder);
      else this.byHolder.set(place.holder, n);
    }
    if (place.stream) this.forget(place.stream);
  }

  /** Ends every stream (the server is closing): their readers reconnect elsewhere or later. */
  closeAll(): void {
    for (const s of this.streams) this.close(s);
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.flushTimer);
    this.stopFollowing();
    this.stopResets();
  }

  private forget(stream: Stream): void {
    if (stream.closed) return;
    stream.closed = true;
    this.streams.delete(stream);
    this.active.delete(stream);
    const group = stream.parkedIn;
    if (group) {
      group.streams.delete(stream);
      if (group.streams.size === 0) this.parked.delete(group.key);
    }
    stream.unfollow();
    stream.place.release();
  }

  private close(stream: Stream, now = false): void {
    this.forget(stream);
    stream.sink.close(now);
  }

  private scheduleFlush(): void {
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, FLUSH_MS);
  }

  /**
   * Writes what is new to every stream that keeps up, as much of it as its unread bound leaves
   * room for (the rest once it drains); sends the others to read the store.
   */
  private flush(): void {
    const { hub } = this.feed;
    const upTo = hub.current;
    // What is new past each position, and the text of its events for each filter: built once for
    // all the streams there with that filter. Under a write load thousands of streams share a few
    // positions and filters: weighing each change against each stream's filter, and copying the
    // hub's recent changes for each, was most of what 10,000 open streams cost the writes.
    const recentPast = new Map<bigint, Change[] | undefined>();
    const shared = new Map<bigint, Map<string, Slice>>();
    // Streams in step share one position: the last one's lookups serve the next.
    let at: bigint | undefined;
    let recent: Change[] | undefined;
    let byFilter = new Map<string, Slice>();
    for (const group of this.parked.values()) {
      if (group.at >= upTo) continue;
      const passed = hub.recent(group.at);
      if (passed && !passed.some((c) => matches(c, group.filter))) {
        group.at = upTo;
        continue;
      }
      // Something for them, or the hub holds their position no more: each goes its own way again.
      this.parked.delete(group.key);
      for (const s of group.streams) {
        s.after = group.at;
        s.parkedIn = undefined;
        this.active.add(s);
      }
    }
    for (const s of this.active) {
      if (s.busy || s.after >= upTo) continue;
      if (s.after !== at) {
        at = s.after;
        if (!recentPast.has(at)) recentPast.set(at, hub.recent(at));
        recent = recentPast.get(at);
        if (!shared.has(at)) shared.set(at, new Map());
        byFilter = shared.get(at)!;
      }
      if (!recent) {
        void this.catchUp(s);
        continue;
      }
      // Built for the most any stream may be handed; a stream with less room gets its own.
      let slice = byFilter.get(s.filterKey);
      if (slice === undefined) {
        slice = sliceOf(this.options.framing.event, recent, s.filter, MAX_UNREAD_BYTES);
        byFilter.set(s.filterKey, slice);
      }
      // Nothing passes its filter: every change up to `upTo` is passed over, with no more work.
      if (!slice.text) {
        s.after = upTo;
        this.park(s);
        continue;
      }
      const room = this.room(s);
      if (room <= 0) {
        this.wait(s);
        continue;
      }
      if (slice.bytes > room) slice = sliceOf(this.options.framing.event, recent, s.filter, room);
      // Past the last event written, or every change up to `upTo` (written or passed over).
      s.after = slice.through ?? upTo;
      if (slice.text) {
        s.told = slice.last!;
        this.send(s, slice.text);
      }
      // Cut short by its bound: the rest follows once the reader has taken what it has.
      if (slice.through !== undefined && !s.busy) this.scheduleFlush();
    }
  }

  /** Parks a stream at `after` (the flush's end) with the others of its filter there. */
  private park(s: Stream): void {
    let group = this.parked.get(s.filterKey);
    if (group === undefined) {
      group = { key: s.filterKey, filter: s.filter, at: s.after, streams: new Set() };
      this.parked.set(s.filterKey, group);
    } else if (group.at !== s.after) return;
    group.streams.add(s);
    s.parkedIn = group;
    this.active.delete(s);
  }

  /**
   * Runs the reads of the streams that catch up one at a time, each followed by a turn of the
   * event loop. A read of SQLite is synchronous, and a filtered one walks a window of the log
   * (SCAN_WINDOW positions) however few changes pass the filter: streams that catch up on a long
   * log together, each yielding between its own reads, still held every other request back for
   * one window each per turn, and 200 of them for seconds. In turn, the loop waits for one window.
   */
  private inTurn<T>(read: () => Promise<T>): Promise<T> {
    const done = this.catchingUp.then(read);
    this.catchingUp = done.then(nextTurn, nextTurn);
    return done;
  }

  /** Reads the store by pages for a stream behind the hub's memory, until it is back within it. */
  private async catchUp(stream: Stream): Promise<void> {
    stream.busy = true;
    try {
      const { hub } = this.feed;
      while (!stream.closed && !hub.recent(stream.after)) {
        if (this.room(stream) <= 0) {
          await this.drained(stream);
          continue;
        }
        const page = await this.inTurn(() =>
          stream.closed
            ? Promise.resolve(undefined)
            : readAfter(this.feed, stream.after, BATCH, stream.filter, { upTo: hub.current }),
        );
        if (page === undefined || stream.closed) break;
        const { changes, scannedTo } = page;
        // As much as its bound holds; what did not fit is read again once it has drained.
        const slice = sliceOf(this.options.framing.event, changes, {}, this.room(stream));
        stream.after = slice.through ?? scannedTo;
        if (slice.last !== undefined) stream.told = slice.last;
        if (slice.text && !this.write(stream, slice.text)) await this.drained(stream);
      }
    } catch (err) {
      this.options.onError(err);
      this.close(stream);
    } finally {
      stream.busy = false;
      this.scheduleFlush();
    }
  }

  /** What the stream may still be handed before its reader has left MAX_UNREAD_BYTES unread. */
  private room(stream: Stream): number {
    return MAX_UNREAD_BYTES - stream.sink.buffered;
  }

  private send(stream: Stream, text: string): void {
    if (!this.write(stream, text)) this.wait(stream);
  }

  /** Writes no more to the stream until its reader has taken what it holds (or is closed for stalling). */
  private wait(stream: Stream): void {
    stream.busy = true;
    void this.drained(stream).then(() => {
      stream.busy = false;
      this.scheduleFlush();
    });
  }

  /** Writes unless the reader has left too much unread: then it is closed. False: wait for the drain. */
  private write(stream: Stream, text: string): boolean {
    if (stream.sink.buffered > MAX_UNREAD_BYTES) {
      this.close(stream, true);
      return true;
    }
    return stream.sink.write(text);
  }

  private drained(stream: Stream): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.close(stream, true);
        done();
      }, STALL_MS);
      void stream.sink.drained().then(done);
    });
  }

  /**
   * Keeps idle streams open through proxies, and moves on a filtered stream that its filter kept
   * silent: a bookmark at how far it looked, so that its reader resumes there rather than
   * scanning again every change it passed over (Kubernetes' watch bookmarks).
   */
  private heartbeat(): void {
    const { heartbeat, bookmark } = this.options.framing;
    const turn = (this.heartbeatTurn = (this.heartbeatTurn + 1) % HEARTBEAT_SLOTS);
    for (const s of this.streams) {
      if (s.busy || s.slot !== turn) continue;
      if (s.parkedIn) s.after = s.parkedIn.at;
      const moved = s.after > s.told;
      if (moved) s.told = s.after;
      this.write(s, moved ? heartbeat + bookmark(s.after) : heartbeat);
    }
  }

  /**
   * One check per credential, however many places it holds. A credential refused closes its
   * streams and answers its long polls with the refusal; a check that cannot be made (the store
   * is unavailable) leaves them be.
   */
  private async recheck(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const byCredential = new Map<string, Place[]>();
      for (const p of this.places) {
        const list = byCredential.get(p.credential);
        if (list) list.push(p);
        else byCredential.set(p.credential, [p]);
      }
      await Promise.all(
        [...byCredential].map(async ([credential, places]) => {
          try {
            await this.options.verify(credential);
          } catch (err) {
            if (!(err instanceof UnauthenticatedError || err instanceof ForbiddenError)) return;
            for (const p of places) {
              if (p.stream) this.close(p.stream);
              else p.refuse(err);
            }
          }
        }),
      );
    } finally {
      this.checking = false;
    }
  }
}
