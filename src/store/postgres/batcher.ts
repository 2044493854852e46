/**
 * Gathers concurrent calls into batches: while `maxInFlight` batches are under way, new items
 * wait, and each batch that ends starts the next with everything that waited. Otherwise a batch
 * starts at the end of the turn of the event loop its first item came in, with the items that
 * came in the same turn (the requests read together): a lone item waits for no other.
 * `runBatch` answers one settled result per item, in order.
 */
export class Batcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

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
      this.schedule();
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

  private next(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) this.start(this.queue.splice(0, this.maxBatch));
  }

  private start(batch: { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }[]): void {
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
