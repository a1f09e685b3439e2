import type { AGUIEvent } from "@ag-ui/core";

/** Where a run writes its events; `closed` aborts when the client goes away. */
export interface EventSink {
  write(events: readonly AGUIEvent[]): void;
  readonly closed: AbortSignal;
}
