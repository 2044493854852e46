// A change log held in an array, for tests of the feed that need no store (test/feed/).
import { changeOf, type Change } from '../../src/domain/change.js';
import type { ChangeLog } from '../../src/store/changes.js';

/** Changes at positions 1..n of one history, named by `history` in each plant's name. */
export const changes = (history: string, n: number): Change[] =>
  Array.from({ length: n }, (_, i) =>
    changeOf({
      position: BigInt(i + 1),
      type: 'plant.created',
      id: BigInt(i + 1),
      body: JSON.stringify({ id: i + 1, name: `${history} ${i + 1}` }),
      tag: null,
      oldTag: null,
      time: 0,
    }),
  );

/** A change log held in an array, which `replace` swaps for another history; `replaced` is the store's signal. */
export function memoryLog(initial: Change[]) {
  let log = initial;
  const listeners: (() => void)[] = [];
  const writes = new Set<(position: bigint) => void>();
  const changeLog: ChangeLog = {
    bounds: () => Promise.resolve({ floor: 1n, current: log.at(-1)?.position ?? 0n }),
    read: (after, upTo, limit) => {
      const found = log.filter((c) => c.position > after && c.position <= upTo).slice(0, limit);
      return Promise.resolve({ changes: found, scannedTo: found.length === limit ? found.at(-1)!.position : upTo });
    },
    prune: () => Promise.resolve(0),
    onReplaced: (listener) => listeners.push(listener),
    onWritten: (listener) => {
      writes.add(listener);
      return () => writes.delete(listener);
    },
  };
  return {
    changeLog,
    replace: (next: Change[]) => (log = next),
    replaced: () => listeners.forEach((l) => l()),
    /** A write of this process acknowledged at `position`, as the store tells it. */
    written: (position: bigint) => writes.forEach((l) => l(position)),
  };
}
