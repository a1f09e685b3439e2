/**
 * Group commit one level above the database: requests submitted during one event-loop turn are
 * handed to `flush` together, as one batch (at most `maxBatch` each), when that turn ends.
 *
 * Why a turn and not a timer: nothing waits on purpose. A lone request leaves at the end of the
 * turn that made it, as it would have; requests that are made together — the worker's runs resuming
 * on the answers of one batch, many sessions' commits arriving at once — leave together and share
 * one round trip and one transaction. Under load batches form by themselves, because the callers of
 * one batch are all woken in one turn and submit their next requests in it.
 *
 * `flush` answers every input of its batch, in order; if it throws, every request of that batch is
 * rejected with the error.
 */
export class TurnBatcher<In, Out> {
  private queue: { input: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] | null = null;

  constructor(
    private readonly flush: (inputs: In[]) => Promise<Out[]>,
    private readonly maxBatch = 64,
  ) {}

  submit(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      if (!this.queue) {
        this.queue = [];
        setImmediate(() => this.drain());
      }
      this.queue.push({ input, resolve, reject });
    });
  }

  private drain(): void {
    const queued = this.queue ?? [];
    this.queue = null;
    for (let start = 0; start < queued.length; start += this.maxBatch) {
      const batch = queued.slice(start, start + this.maxBatch);
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
