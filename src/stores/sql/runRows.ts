import type { Database } from "./schema.js";

/** The row of a run a user input just started: queued, unclaimed, epoch 0, available now. */
export function queuedRunRow(
  runId: string,
  sessionId: string,
  threadId: string,
  now: number,
  traceContext: string | null = null,
): Database["runs"] {
  return {
    id: runId,
    session_id: sessionId,
    thread_id: threadId,
    state: "queued",
    owner: null,
    epoch: 0,
    lease_expires_at: null,
    available_at: now,
    crash_count: 0,
    created_at: now,
    updated_at: now,
    trace_context: traceContext,
  };
}
