import type { SessionRecord, ThreadRecord } from "../../coordinator/ports.js";
import { workflowRunOfThread } from "../../coordinator/workflowIds.js";
import { isoTime } from "../../kernel/clock.js";
import { threadAgentDto } from "./multiagentDto.js";
import { activeSecondsOf, meteredUsageDto } from "./usageDto.js";

/**
 * A session thread on the wire (SDK `BetaManagedAgentsSessionThread`). Its agent is the one it
 * runs, pinned, without the multiagent roster (the SDK reads that from the session); its status and
 * usage are its own committed facts' projection. Stats and usage stay null until the thread's first
 * commit: before it nothing ran on it.
 */
export function threadDto(
  session: SessionRecord,
  thread: ThreadRecord,
  now: number,
): Record<string, unknown> {
  // A thread's age stops when it ends or is archived, its running time when it ends.
  const end = thread.meter.endedAt ?? thread.archivedAt ?? now;
  return {
    id: thread.id,
    type: "session_thread",
    session_id: thread.sessionId,
    parent_thread_id: thread.parentThreadId,
    workflow_run_id: workflowRunOfThread(thread.id),
    status: thread.status,
    // A child thread runs its own agent; a primary thread the session's.
    agent: threadAgentDto(thread.agent ?? session.agent),
    stats: thread.committed
      ? {
          active_seconds: activeSecondsOf(thread.meter, now),
          duration_seconds: Math.max(0, Math.round((end - thread.createdAt) / 1000)),
        }
      : null,
    usage: thread.committed ? meteredUsageDto(thread.usage, thread.meter, now) : null,
    created_at: isoTime(thread.createdAt),
    updated_at: isoTime(thread.updatedAt),
    archived_at: thread.archivedAt === null ? null : isoTime(thread.archivedAt),
  };
}
