import { closeSync, constants, fdatasync, openSync } from 'node:fs';

/**
 * Makes commits durable: an `fdatasync` of the store's write-ahead log, on libuv's thread pool,
 * off the event loop. Commits are numbered as they return; `durable(n)` resolves once a sync that
 * started after commit n returned has finished, so every commit that returned while a sync was
 * under way waits for the next one, and one sync covers all of them (group commit). Linux syncs
 * the file, whichever descriptor names it, so a descriptor of our own on the -wal file serves.
 */
export class WalSync {
  private readonly fd: number;
  private committed = 0;
  private synced = 0;
  private syncing = false;
  private waiters: { upTo: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  /** Syncs that finished: each made every commit before it durable. */
  syncs = 0;

  constructor(walPath: string) {
    // Created owner-only when SQLite has not created it yet (its first write will use it).
    this.fd = openSync(walPath, constants.O_RDONLY | constants.O_CREAT, 0o600);
  }

  /** A commit returned: its number, to wait on. */
  commit(): number {
    return ++this.committed;
  }

  durable(commit: number): Promise<void> {
    if (commit <= this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ upTo: commit, resolve, reject });
      this.start();
    });
  }

  private start(): void {
    if (this.syncing || this.waiters.length === 0) return;
    this.syncing = true;
    const upTo = this.committed;
    fdatasync(this.fd, (err) => {
      this.syncing = false;
      const covered = this.waiters.filter((w) => w.upTo <= upTo);
      this.waiters = this.waiters.filter((w) => w.upTo > upTo);
      if (err) {
        for (const w of covered) w.reject(err);
      } else {
        this.synced = upTo;
        this.syncs++;
        for (const w of covered) w.resolve();
      }
      this.start();
    });
  }

  close(): void {
    closeSync(this.fd);
  }
}
