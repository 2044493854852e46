import type { Change, ChangeFilter, LogBounds } from '../domain/change.js';

/**
 * Most positions one read of a filtered feed walks past: a tag that few changes carry cannot make
 * a read walk the whole log. A read that stops there says how far it got (`scannedTo`), and the
 * reader goes on from there.
 */
export const SCAN_WINDOW = 10_000n;

/** What one read of the log found, and how far it looked. */
export interface ChangePage {
  changes: Change[];
  /** The reader has seen everything up to here: the last change returned, or where the walk stopped. */
  scannedTo: bigint;
}

/**
 * The change log: every change to a plant, written by the write path in the transaction of the
 * change (write-path.ts), in commit order. Webhook deliveries are made from the same rows.
 */
export interface ChangeLog {
  /**
   * The floor (the oldest position kept) and the current position: the last change committed
   * that every reader may be given. On SQLite, only changes made durable count.
   */
  bounds(): Promise<LogBounds>;
  /**
   * Up to `limit` changes with a position above `after` and at most `upTo` that pass `filter`, in
   * position order; an unfiltered or one-plant read returns them all, a tag filter walks at most
   * SCAN_WINDOW positions.
   */
  read(after: bigint, upTo: bigint, limit: number, filter: ChangeFilter): Promise<ChangePage>;
  /**
   * Deletes the changes made before `before` (epoch ms) that no webhook delivery still waits for,
   * and raises the floor past them; resolves to how many went.
   */
  prune(before: number): Promise<number>;
  /**
   * `listener` is called when the log may have become another history: the store writes to
   * another primary (a failover), where the positions past what it had replicated name other
   * changes, or none. A store of one database never calls it.
   */
  onReplaced?(listener: () => void): void;
  /**
   * `listener` is told of each plant write of this process (single, batch, import) as it is
   * acknowledged, with the position its changes reached: every change up to there is committed
   * and durable. Resolves nothing of other processes' writes. The result stops it.
   */
  onWritten(listener: (position: bigint) => void): () => void;
}
