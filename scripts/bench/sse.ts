// What the feed section's stream reader needs of Server-Sent Events: the `id:` of each event as
// its chunk arrives (an event's id is its change's position), and the delivery latencies of a
// million events or more kept in a fixed histogram rather than one number each.

/** The `id:` values of a stream's events (not its bookmarks), fed chunk by chunk; a line split across chunks is kept for the next. */
export class SseIds {
  private tail = '';

  /** The ids of the lines `chunk` completes, in order. Positions stay below 2^53: a Number holds them exactly. */
  push(chunk: string): number[] {
    const text = this.tail + chunk;
    const end = text.lastIndexOf('\n');
    if (end < 0) {
      this.tail = text;
      return [];
    }
    this.tail = text.slice(end + 1);
    const ids: number[] = [];
    const next = (from: number) => {
      const at = text.indexOf('\nid:', from);
      return at < 0 ? -1 : at + 1;
    };
    // Every line up to `end` is whole, and the first starts at 0; an id line past `end` waits in `tail`.
    for (let at = text.startsWith('id:') ? 0 : next(0); at >= 0 && at <= end;) {
      const eol = text.indexOf('\n', at);
      // What follows the id line tells an event from a bookmark: it waits for the next chunk.
      if (eol === end) {
        this.tail = text.slice(at);
        break;
      }
      // A bookmark (an id and a blank line, no data) is no event: EventSource dispatches nothing.
      // "id:" then at most one space, as the standard reads a field.
      if (text[eol + 1] !== '\n') ids.push(Number(text.slice(text[at + 3] === ' ' ? at + 4 : at + 3, eol)));
      at = next(eol);
    }
    return ids;
  }
}

/** Latencies in bins of `binMs` up to `maxMs` (longer ones count in the last bin); below 0 counts as 0. */
export class Histogram {
  private readonly bins: Uint32Array;
  count = 0;
  max = 0;

  constructor(
    private readonly binMs = 0.1,
    maxMs = 60_000,
  ) {
    this.bins = new Uint32Array(Math.ceil(maxMs / binMs) + 1);
  }

  record(ms: number, times = 1): void {
    const bin = Math.min(this.bins.length - 1, Math.max(0, Math.floor(ms / this.binMs)));
    this.bins[bin]! += times;
    this.count += times;
    if (ms > this.max) this.max = ms;
  }

  /** The upper edge of the bin holding the p-th percentile (0 < p <= 100), at most the max; NaN when empty. */
  percentile(p: number): number {
    if (this.count === 0) return NaN;
    const rank = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let i = 0; i < this.bins.length; i++) {
      seen += this.bins[i]!;
      // The last bin holds everything past the range: its only known bound is the max.
      if (seen >= rank) return i === this.bins.length - 1 ? this.max : Math.min((i + 1) * this.binMs, this.max);
    }
    return this.max;
  }
}
