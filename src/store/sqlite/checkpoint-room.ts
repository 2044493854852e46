import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';

/** Below this much room on its disk the store says it cannot take writes (readiness, metrics). */
export const MIN_FREE_BYTES = 1024 * 1024;

/** The room on the disk that holds the store's file, for an unprivileged process. */
export function freeBytes(path: string): number {
  const { bavail, bsize } = statfsSync(dirname(path));
  return bavail * bsize;
}

/**
 * How many bytes a checkpoint would add to the database file: the pages the store has as of the
 * WAL's last commit, past the file's end. A checkpoint writes them all before it lets the WAL go,
 * so it needs this much room on the disk to finish; one that runs out of it keeps what it wrote
 * (the file stays grown) and frees nothing. Reads only (`page_count` is read from the WAL's last
 * commit, on a read transaction).
 */
export function checkpointGrowth(db: Database.Database, path: string): number {
  const pages = Number(db.pragma('page_count', { simple: true }));
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  return Math.max(0, pages * pageSize - statSync(path).size);
}

/** The disk has room for a checkpoint to finish, and still MIN_FREE_BYTES after it. */
export function checkpointFits(db: Database.Database, path: string, free = freeBytes(path)): boolean {
  return free - checkpointGrowth(db, path) >= MIN_FREE_BYTES;
}
