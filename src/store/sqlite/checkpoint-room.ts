import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';

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
