/**
 * Gathers concurrent calls into batches: while `maxInFlight` batches are under way, new items
 * wait, and each batch that ends starts the next with everything that waited. A lone item never
 * waits for company. `runBatch` answers one settled result per item, in order.
 */
export class Batcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  private inFlight = 0;

  constructor(
    private readonly runBatch: (items: I[]) => Promise<PromiseSettledResult<O>[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch = 500,
  ) {}

  /** Items waiting for a batch. */
  get waiting(): number {
    return this.queue.length;
  }

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight++;
    this.runBatch(batch.map((b) => b.item))
      .then(
        (results) =>
          results.forEach((r, i) =>
            r.status === 'fulfilled' ? batch[i]!.resolve(r.value) : batch[i]!.reject(r.reason),
          ),
        (err: unknown) => batch.forEach((b) => b.reject(err)),
      )
      .finally(() => {
        this.inFlight--;
        this.next();
      });
  }
}
