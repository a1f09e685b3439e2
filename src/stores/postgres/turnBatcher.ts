/**
 * Group commit one level above the database: requests submitted during one event-loop turn are
 * handed to `flush` together when that turn ends.
 *
 * Why a turn and not a timer: nothing waits on purpose. A lone request leaves at the end of the
 * turn that made it, as it would have; requests that are made together — the worker's runs resuming
 * on the answers of one batch, many sessions' commits arriving at once — leave together and share
 * one round trip and one transaction. Under load batches form by themselves, because the callers of
 * one batch are all woken in one turn and submit their next requests in it.
 *
 * Why a turn's requests still leave in two halves once there are `splitFrom` of them: one batch
 * that carries every caller turns the process and the database into a relay, where each waits
 * while the other works (measured at concurrency 8: one core of two busy). With two calls in
 * flight the database runs one while this process prepares the other and both cores work; the
 * halves keep most of the batching (a round trip and a WAL flush per half). `maxBatch` bounds one
 * call.
 *
 * `flush` answers every input of its batch, in order; if it throws, every request of that batch is
 * rejected with the error.
 */
export class TurnBatcher<In, Out> {
  private queue: { input: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] | null = null;
  private readonly maxBatch: number;
  private readonly splitFrom: number;

  constructor(
    private readonly flush: (inputs: In[]) => Promise<Out[]>,
    options: { maxBatch?: number; splitFrom?: number } = {},
  ) {
    this.maxBatch = options.maxBatch ?? 64;
    this.splitFrom = options.splitFrom ?? 8;
  }

  submit(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      if (!this.queue) {
        this.queue = [];
        setImmediate(() => this.drain());
      }
      this.queue.push({ input, resolve, reject });
    });
  }

  /** How many requests go in each call for a turn that made `queued` of them. */
  batchSize(queued: number): number {
    const half = queued >= this.splitFrom ? Math.ceil(queued / 2) : queued;
    return Math.max(1, Math.min(this.maxBatch, half));
  }

  private drain(): void {
    const queued = this.queue ?? [];
    this.queue = null;
    const size = this.batchSize(queued.length);
    for (let start = 0; start < queued.length; start += size) {
      const batch = queued.slice(start, start + size);
      this.flush(batch.map((entry) => entry.input)).then(
        (outs) => {
          batch.forEach((entry, i) => {
            const out = outs[i];
            if (out === undefined)
              entry.reject(new Error("TurnBatcher: flush answered fewer inputs than it was given"));
            else entry.resolve(out);
          });
        },
        (error: unknown) => {
          for (const entry of batch) entry.reject(error);
        },
      );
    }
  }
}
