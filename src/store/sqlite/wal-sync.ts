import { closeSync, constants, fdatasync, fstatSync, openSync, statSync } from 'node:fs';
import { StoreUnavailableError } from '../../domain/errors.js';

/**
 * Makes commits durable: an `fdatasync` of the store's write-ahead log, on libuv's thread pool,
 * off the event loop. Commits are numbered as they return; `durable(n)` resolves once a sync that
 * started after commit n returned has finished, so every commit that returned while a sync was
 * under way waits for the next one, and one sync covers all of them (group commit). Linux syncs
 * the file, whichever descriptor names it, so a descriptor of our own on the -wal file serves.
 */
export class WalSync {
  private fd: number;
  private inode: number;
  private committed = 0;
  private synced = 0;
  private syncing = false;
  private waiters: { upTo: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  /**
   * Set when a sync failed. The kernel may have dropped the pages it could not write, so a later
   * sync could succeed without them: from then on nothing is acknowledged until a restart, which
   * recovers from what the WAL really holds.
   */
  failure: StoreUnavailableError | undefined;
  /** Syncs that finished: each made every commit before it durable. */
  syncs = 0;

  constructor(private readonly walPath: string) {
    [this.fd, this.inode] = this.open();
  }

  private open(): [number, number] {
    // Created owner-only when SQLite has not created it yet (its first write will use it).
    const fd = openSync(this.walPath, constants.O_RDONLY | constants.O_CREAT, 0o600);
    return [fd, fstatSync(fd).ino];
  }

  /** A commit returned: its number, to wait on. */
  commit(): number {
    return ++this.committed;
  }

  durable(commit: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
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
    this.followReplacement();
    fdatasync(this.fd, (err) => {
      this.syncing = false;
      if (err) {
        this.failure = new StoreUnavailableError(
          err,
          `the disk failed to sync the store (${err.code ?? err.message}); writes are refused until the server restarts`,
        );
        for (const w of this.waiters.splice(0)) w.reject(this.failure);
        return;
      }
      this.synced = upTo;
      this.syncs++;
      const covered = this.waiters.filter((w) => w.upTo <= upTo);
      this.waiters = this.waiters.filter((w) => w.upTo > upTo);
      for (const w of covered) w.resolve();
      this.start();
    });
  }

  /**
   * SQLite deletes the -wal file when the last connection to the store closes, and the next one
   * creates a new file: a sync of the old one would sync nothing. This process keeps its
   * connections open, but another's close must not fool it either.
   */
  private followReplacement(): void {
    let current: number | undefined;
    try {
      current = statSync(this.walPath).ino;
    } catch {
      current = undefined;
    }
    if (current === this.inode) return;
    closeSync(this.fd);
    [this.fd, this.inode] = this.open();
  }

  close(): void {
    closeSync(this.fd);
  }
}
