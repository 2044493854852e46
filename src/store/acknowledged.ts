import type { Written } from '../domain/plant-write.js';

/**
 * Who hears of this process's plant writes, each as soon as it is acknowledged (committed and
 * durable): single writes, batches and imports alike, since every one of them resolves through
 * the store's write path. The change feed's hub listens, so that a stream sees a write of its own
 * instance at once rather than at its next look at the log.
 */
export class Acknowledged {
  private readonly listeners = new Set<(position: bigint) => void>();

  /** `listener` is told the log's position each acknowledged write reached; the result stops it. */
  listen(listener: (position: bigint) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells the listeners the highest position these outcomes stand at, and hands them on. */
  told<T extends Written | readonly Written[]>(outcome: T): T {
    if (this.listeners.size === 0) return outcome;
    const all: readonly Written[] = Array.isArray(outcome) ? outcome : [outcome as Written];
    let top: bigint | undefined;
    for (const w of all) if (top === undefined || w.position > top) top = w.position;
    if (top !== undefined) for (const listener of this.listeners) listener(top);
    return outcome;
  }
}
