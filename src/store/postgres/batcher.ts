import type { TraceContext, Tracing } from '../../tracing/tracing.js';

/** What the items of a batch are given: the time left to the earliest of their deadlines. */
export type RunBatch<I, O> = (items: I[], timeoutMs: number) => Promise<PromiseSettledResult<O>[]>;

interface Entry<I, O> {
  item: I;
  /** When its caller stops waiting: the operation's budget from when it was submitted. */
  deadline: number;
  settle: (outcome: { value: O } | { error: unknown }) => void;
  /** The trace of the request that submitted it, when traces are on and it came in one. */
  trace: TraceContext | undefined;
}

/**
 * Gathers concurrent calls into batches: while `maxInFlight` batches are under way, new items
 * wait, and each batch that ends starts the next with everything that waited. Otherwise a batch
 * starts at the end of the turn of the event loop its first item came in, with the items that
 * came in the same turn (the requests read together): a lone item waits for no other.
 * `runBatch` answers one settled result per item, in order.
 *
 * Every item has a budget, counted from its submission, that its waiting in the queue uses up
 * too: a batch is given the time left to its earliest deadline (and is answered `late()` past it,
 * whatever it is still doing), and an item still queued at its deadline is answered `late()`
 * without being run. Without that, writes that queued behind a batch held up by a lock waited for
 * it to time out, then as long again for their own.
 */
export class Batcher<I, O> {
  private queue: Entry<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly runBatch: RunBatch<I, O>,
    private readonly maxInFlight: number,
    private readonly budget: { ms: number; late: () => Error },
    private readonly maxBatch = 500,
    /** Traces, when on: a batch's transaction is in the traces of its items. */
    private readonly tracing?: Pick<Tracing, 'current' | 'gathered'>,
  ) {}

  /** Items waiting for a batch. */
  get waiting(): number {
    return this.queue.length;
  }

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (outcome: { value: O } | { error: unknown }) => {
        if (settled) return;
        settled = true;
        if ('value' in outcome) resolve(outcome.value);
        else reject(outcome.error);
      };
      this.queue.push({ item, deadline: Date.now() + this.budget.ms, settle, trace: this.tracing?.current() });
      this.schedule();
      this.sweepAtDeadline();
    });
  }

  /**
   * Started at once, the first request of a turn went alone, and with two batches allowed the
   * second did too, while the rest of the turn's requests waited for one of them to end.
   */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.next();
    });
  }

  /** Items queued behind busy batches are answered at their deadline, not when a batch frees up. */
  private sweepAtDeadline(): void {
    if (this.sweep || this.inFlight < this.maxInFlight || this.queue.length === 0) return;
    this.sweep = setTimeout(
      () => {
        this.sweep = undefined;
        const now = Date.now();
        // Deadlines grow along the queue: the expired ones are at its head.
        while (this.queue.length > 0 && this.queue[0]!.deadline <= now) {
          this.queue.shift()!.settle({ error: this.budget.late() });
        }
        this.sweepAtDeadline();
      },
      Math.max(0, this.queue[0]!.deadline - Date.now()),
    );
  }

  private next(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) this.start(this.queue.splice(0, this.maxBatch));
    if (this.queue.length === 0 && this.sweep) {
      clearTimeout(this.sweep);
      this.sweep = undefined;
    }
  }

  /** The batch's transaction is in its items' traces, when traces are on (postgres/pool.ts). */
  private run(live: Entry<I, O>[], timeoutMs: number): Promise<PromiseSettledResult<O>[]> {
    const items = live.map((e) => e.item);
    const run = () => this.runBatch(items, timeoutMs);
    if (this.tracing === undefined) return run();
    return this.tracing.gathered(
      live.map((e) => e.trace),
      run,
    );
  }

  private start(batch: Entry<I, O>[]): void {
    const now = Date.now();
    const live = batch.filter((e) => e.deadline > now);
    for (const e of batch) if (e.deadline <= now) e.settle({ error: this.budget.late() });
    if (live.length === 0) return;
    const timeoutMs = Math.min(...live.map((e) => e.deadline)) - now;
    const late = setTimeout(() => live.forEach((e) => e.settle({ error: this.budget.late() })), timeoutMs);
    this.inFlight++;
    this.run(live, timeoutMs)
      .then(
        (results) =>
          results.forEach((r, i) =>
            live[i]!.settle(r.status === 'fulfilled' ? { value: r.value } : { error: r.reason }),
          ),
        (error: unknown) => live.forEach((e) => e.settle({ error })),
      )
      .finally(() => {
        clearTimeout(late);
        this.inFlight--;
        this.next();
        this.sweepAtDeadline();
      });
  }
}
