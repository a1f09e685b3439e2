import type { SessionTail, TailItem, TailOpenOptions } from "../coordinator/sessionTail.js";
import type { Metrics } from "../kernel/metrics.js";

/**
 * The session tail every protocol's stream reads, counted while it is being read: one place for the
 * open-streams gauge whatever the wire, closed however the stream ends (client gone, error, overflow).
 */
export function countedTail(tail: SessionTail, metrics: Metrics): SessionTail {
  return {
    open(session, options: TailOpenOptions): AsyncIterable<TailItem> {
      const inner = tail.open(session, options);
      return {
        async *[Symbol.asyncIterator]() {
          const close = metrics.streamOpened();
          try {
            yield* inner;
          } finally {
            close();
          }
        },
      };
    },
  };
}
