import type { AGUIEvent } from "@ag-ui/core";

/**
 * Where a run writes its events; `closed` aborts when the client goes away. `write` resolves when
 * the next events may be produced: the run awaits it, so a client that stops reading pauses the tail.
 */
export interface EventSink {
  write(events: readonly AGUIEvent[]): Promise<void>;
  readonly closed: AbortSignal;
}
