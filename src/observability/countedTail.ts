import type { SessionTail, TailItem, TailOpenOptions } from "../coordinator/sessionTail.js";
import type { Metrics } from "../kernel/metrics.js";

/**
 * The session tail every protocol's stream reads, counted while it is being read: one place for the
 * open-streams gauge whatever the wire, closed however the stream ends (client gone, error, overflow).
 * A plain iterator over the inner one rather than an async generator, so no item pays an extra
 * promise hop on its way to the stream.
 */
export function countedTail(tail: SessionTail, metrics: Metrics): SessionTail {
  return {
    open(session, options: TailOpenOptions): AsyncIterable<TailItem> {
      const inner = tail.open(session, options);
      return { [Symbol.asyncIterator]: () => new CountedIterator(inner[Symbol.asyncIterator](), metrics) };
    },
  };
}

/** Counts one open stream from the first `next()` until the inner iterator ends, fails or is returned. */
class CountedIterator implements AsyncIterator<TailItem> {
  private close: (() => void) | null = null;
  private done = false;

  constructor(
    private readonly inner: AsyncIterator<TailItem>,
    private readonly metrics: Metrics,
  ) {}

  next(): Promise<IteratorResult<TailItem>> {
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    if (!this.close) this.close = this.metrics.streamOpened();
    return this.inner.next().then(
      (result) => {
        if (result.done) this.end();
        return result;
      },
      (error: unknown) => {
        this.end();
        throw error;
      },
    );
  }

  async return(): Promise<IteratorResult<TailItem>> {
    try {
      await this.inner.return?.();
    } finally {
      this.end();
    }
    return { value: undefined, done: true };
  }

  private end(): void {
    this.done = true;
    this.close?.();
    this.close = null;
  }
}
