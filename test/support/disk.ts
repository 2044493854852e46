import { closeSync, openSync, writeSync } from 'node:fs';

/** Writes zeros into `path` until the disk has no room left, or `maxBytes` are written (64 MiB by default). */
export function fill(path: string, maxBytes = 64 * 1024 * 1024): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (let written = 0; written < maxBytes; written += chunk.length) {
      writeSync(fd, chunk, 0, Math.min(chunk.length, maxBytes - written));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}
