// Following the store from a page: EventSource cannot send Authorization, so each stream is opened
// with a stream ticket (POST /plants/changes/tickets) made with the page's token; when the stream
// ends for good (its ticket expired, the server restarted past EventSource's own retry, a 503),
// a new ticket opens it again after the last event received, losing and repeating nothing.
import { readJson } from '../json/read-json.js';
import { ChangesGoneError, FollowError, type Change, type SnapshotPlant } from './follow.js';

export interface BrowserFollowOptions {
  /** The service's origin, as the page reaches it (`https://plants.example`). */
  baseUrl: string;
  /** The bearer token, or what gives the current one (a page whose access token is refreshed). */
  token: string | (() => string | Promise<string>);
  /** Follow the changes after this position (a list's `Change-Position`); absent: from now on. */
  after?: string;
  tag?: string[];
  id?: number | bigint;
  /**
   * The store's plants first, as of one position, then the changes after it (`snapshot=true`):
   * `onSnapshot` is called as a snapshot starts (again if one is cut off before `onSynced`).
   */
  snapshot?: boolean;
  onChange(change: Change): void;
  onSnapshot?(): void;
  onPlant?(item: SnapshotPlant): void;
  onSynced?(position: string): void;
  /** Told of what stops it (a refused token: 401 or 403; 410: list again) and of each retried failure. */
  onError?(error: unknown): void;
  /** The pause before opening again after a stream ended; 1,000 ms by default. */
  retryMs?: number;
  /** The page's EventSource (a test may give another). */
  EventSource?: typeof EventSource;
}

export interface BrowserFollower {
  /** The position of the last change (or `synced`) received. */
  readonly after: string | undefined;
  close(): void;
}

/**
 * Follows the store from a page, for as long as it is not closed. Each change reaches `onChange`
 * once, in position order, with ids and positions past 2^53 as bigint.
 */
export function followChangesInBrowser(options: BrowserFollowOptions): BrowserFollower {
  const base = options.baseUrl.replace(/\/+$/, '');
  const Source = options.EventSource ?? globalThis.EventSource;
  const retryMs = options.retryMs ?? 1000;
  let after = options.after;
  let closed = false;
  let source: EventSource | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const bearer = async () => `Bearer ${typeof options.token === 'function' ? await options.token() : options.token}`;
  const query = (extra: Record<string, string>) => {
    const q = new URLSearchParams(extra);
    for (const tag of options.tag ?? []) q.append('tag', tag);
    if (options.id !== undefined) q.set('id', String(options.id));
    if (after !== undefined) q.set('after', after);
    return q;
  };
  const stop = (error: unknown) => {
    closed = true;
    options.onError?.(error);
  };
  const later = (error?: unknown) => {
    if (error !== undefined) options.onError?.(error);
    if (!closed) timer = setTimeout(() => void open(), retryMs);
  };

  /** A stream that ended for good: 410 ends following (list again); anything else opens anew. */
  async function ended(): Promise<void> {
    if (after === undefined) return later();
    const r = await fetch(`${base}/plants/changes?${query({ limit: '1' })}`, {
      headers: { authorization: await bearer() },
    }).catch(() => undefined);
    if (r?.status === 410) return stop(new ChangesGoneError(after === undefined ? undefined : BigInt(after), 'gone'));
    later();
  }

  async function open(): Promise<void> {
    if (closed) return;
    let ticket: string;
    try {
      const r = await fetch(`${base}/plants/changes/tickets`, {
        method: 'POST',
        headers: { authorization: await bearer() },
      });
      const body = (await r.json().catch(() => ({}))) as { ticket?: string; message?: string };
      if (r.status === 401 || r.status === 403) return stop(new FollowError(r.status, body.message ?? r.statusText));
      if (!r.ok || body.ticket === undefined) return later(new FollowError(r.status, body.message ?? r.statusText));
      ticket = body.ticket;
    } catch (err) {
      return later(err);
    }
    if (closed) return;
    const snapshot = options.snapshot === true && after === undefined;
    const extra: Record<string, string> = { ticket, ...(snapshot && { snapshot: 'true' }) };
    if (snapshot) options.onSnapshot?.();
    const s = new Source(`${base}/plants/changes?${query(extra)}`);
    source = s;
    // An event's data and id, as EventSource dispatches them (a MessageEvent).
    const on = (type: string, listener: (e: { data: string; lastEventId: string }) => void) =>
      s.addEventListener(type, listener as unknown as (e: Event) => void);
    for (const type of ['created', 'updated', 'deleted']) {
      on(type, (e) => {
        after = e.lastEventId;
        options.onChange(readJson(e.data) as Change);
      });
    }
    on('plant', (e) => options.onPlant?.(readJson(e.data) as SnapshotPlant));
    on('synced', (e) => {
      after = e.lastEventId;
      options.onSynced?.(e.lastEventId);
    });
    s.onerror = () => {
      if (s.readyState === Source.CLOSED && source === s && !closed) void ended();
    };
  }

  void open();
  return {
    get after() {
      return after;
    },
    close() {
      closed = true;
      clearTimeout(timer);
      source?.close();
    },
  };
}
