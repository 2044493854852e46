// Following the change log with JSON long polls (`GET /plants/changes?after=&wait=`): what a
// program without EventSource, or behind a proxy that buffers streams, uses to stay in step.
import type { PlantStoreClient } from './client-type.js';
import { nextQuery } from './link.js';
import type { components } from './schema.js';

/** `{position, type, id, plant?, time}`: one change of the log; int64s past 2^53 arrive as bigint. */
export type Change = components['schemas']['Change'];
/** `{type: 'plant', id, plant}`: a plant as the store held it at a snapshot's position. */
export type SnapshotPlant = components['schemas']['SnapshotPlant'];

export interface FollowOptions {
  client: Pick<PlantStoreClient, 'GET'>;
  /**
   * Follow the changes after this position: the `Change-Position` header of the first page of a
   * listing (as a string, as the header has it), or the last change applied. Absent: from the
   * oldest change the store keeps.
   */
  after?: number | bigint | string;
  /** How long each poll waits for a change, in seconds (1 to 60); 30 by default. */
  wait?: number;
  /** Changes per page (1 to 1000); the server's default (100) when absent. */
  limit?: number;
  tag?: string[];
  id?: number | bigint;
  /** Ends the iteration (quietly: the loop just ends), also in the middle of a poll or a pause. */
  signal?: AbortSignal;
  /** The first pause after a failure, doubled at each failure in a row up to `maxDelayMs`; 250 by default. */
  minDelayMs?: number;
  /** The longest pause between attempts (a Retry-After included); 10,000 by default. */
  maxDelayMs?: number;
  /** Failures in a row retried before the last one is thrown; without end by default. */
  maxRetries?: number;
  /** Told of each failure about to be retried, and the pause before the retry (to log it). */
  onRetry?: (error: unknown, delayMs: number) => void;
  /**
   * List and follow in one helper (`snapshot=true`), when `after` is absent: called first with
   * every plant that passes `tag`/`id` as the store held it at one position, and that position;
   * the changes after it follow. Applied in order, they keep the caller's plants the store's.
   */
  onSnapshot?: (plants: SnapshotPlant[], position: bigint) => void | Promise<void>;
}

/** 410: the log no longer holds the changes after this position (or never had it): list again. */
export class ChangesGoneError extends Error {
  readonly status = 410;
  constructor(
    readonly after: bigint | undefined,
    serverMessage: string,
  ) {
    super(
      `the change feed cannot resume after position ${after ?? '(start)'}: list the plants again (${serverMessage})`,
    );
    this.name = 'ChangesGoneError';
  }
}

/** A refusal that retrying does not cure (401, 403, 400...), with the server's Error body. */
export class FollowError extends Error {
  constructor(
    readonly status: number,
    serverMessage: string,
  ) {
    super(`following the changes failed with ${status}: ${serverMessage}`);
    this.name = 'FollowError';
  }
}

/** A 408, a 429 or a 5xx: worth another try, after the server's Retry-After when it gives one. */
class Retryable extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs: number,
    message: string,
  ) {
    super(`${status}: ${message}`);
  }
}

const nextAfter = (link: string | null) => new URLSearchParams(nextQuery(link)).get('after') ?? undefined;

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Every change after `after`, once each, in position order, for as long as the caller iterates:
 *
 *     // List, then follow: page through GET /plants keeping the first page's Change-Position;
 *     // every change after it is one the listing may not show, and none before it is missing.
 *     const first = await client.GET('/plants', { params: { query: { limit: 1000 } } });
 *     const after = first.response.headers.get('change-position')!;
 *     // ... the following pages, by their Link rel="next" ...
 *     for await (const change of followChanges({ client, after, signal })) apply(change);
 *
 * Network errors, 408, 429 and 5xx (a server restarting) are retried from the last position
 * yielded, after a pause that doubles up to `maxDelayMs`; 410 throws ChangesGoneError (list
 * again, then follow from the new listing's position); other refusals throw FollowError.
 */
export async function* followChanges(options: FollowOptions): AsyncGenerator<Change, void, undefined> {
  const { client, signal, wait = 30, limit, tag, id } = options;
  const { minDelayMs = 250, maxDelayMs = 10_000, maxRetries = Infinity } = options;
  let after = options.after === undefined ? undefined : BigInt(options.after);
  let failures = 0;
  if (options.onSnapshot && after === undefined) after = await snapshot(options.onSnapshot);
  while (!signal?.aborted) {
    let page: Change[];
    let link: string | null;
    try {
      ({ page, link } = await poll());
      failures = 0;
    } catch (err) {
      if (signal?.aborted) return;
      if (err instanceof ChangesGoneError || err instanceof FollowError) throw err;
      if (++failures > maxRetries) throw err;
      const backoff = Math.min(maxDelayMs, minDelayMs * 2 ** (failures - 1));
      const delay = Math.min(maxDelayMs, Math.max(backoff, err instanceof Retryable ? err.retryAfterMs : 0));
      options.onRetry?.(err, delay);
      await pause(delay, signal);
      continue;
    }
    for (const change of page) {
      const position = BigInt(change.position);
      // A change at or before one already given is never given again.
      if (after !== undefined && position <= after) continue;
      after = position;
      yield change;
    }
    // A filtered page may have looked past its last change: its Link says how far.
    const scanned = nextAfter(link);
    if (scanned !== undefined && (after === undefined || BigInt(scanned) > after)) after = BigInt(scanned);
  }

  /** The snapshot, handed over; resolves to its position, where following starts. */
  async function snapshot(onSnapshot: NonNullable<FollowOptions['onSnapshot']>): Promise<bigint> {
    const { data, error, response } = await client.GET('/plants/changes', {
      params: { query: { snapshot: true, tag, id } },
      ...(signal && { signal }),
    });
    if (!data) {
      const message = (error as { message?: unknown } | undefined)?.message;
      throw new FollowError(response.status, typeof message === 'string' ? message : response.statusText);
    }
    const items = data as (SnapshotPlant | { type: 'synced'; position: number | bigint })[];
    const synced = items.at(-1);
    if (synced?.type !== 'synced') throw new FollowError(response.status, 'the snapshot did not end with synced');
    await onSnapshot(items.slice(0, -1) as SnapshotPlant[], BigInt(synced.position));
    return BigInt(synced.position);
  }

  async function poll(): Promise<{ page: Change[]; link: string | null }> {
    // A poll that outlives its wait by far is a connection gone quiet: dropped and retried.
    const timeout = AbortSignal.timeout((wait + 15) * 1000);
    const { data, error, response } = await client.GET('/plants/changes', {
      params: { query: { after, wait, limit, tag, id } },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    // Without snapshot=true a page holds changes only (a snapshot's plant and synced items never).
    if (data) return { page: data as Change[], link: response.headers.get('link') };
    const message = (error as { message?: unknown } | undefined)?.message;
    const text = typeof message === 'string' ? message : response.statusText;
    const { status } = response;
    if (status === 410) throw new ChangesGoneError(after, text);
    if (status === 408 || status === 429 || status >= 500) {
      const seconds = Number(response.headers.get('retry-after'));
      throw new Retryable(status, Number.isFinite(seconds) ? seconds * 1000 : 0, text);
    }
    throw new FollowError(status, text);
  }
}
