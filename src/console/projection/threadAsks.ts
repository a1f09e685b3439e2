/**
 * A session's subagents waiting for a person, from the primary thread's own events: a child's ask
 * is cross-posted there (its tool use with `session_thread_id`), with the child's
 * `session.thread_status_idle` `requires_action` naming what it waits for; the child's next
 * status (running again, or ended) says the wait is over. Answered like the agent's own asks: the
 * server routes the confirmation to the child by the call's id.
 */
import type { SessionEvent } from "../api/wire.js";
import { type AwaitedCall, awaitedUseOf } from "./runState.js";

export interface ThreadAwaitedCall extends AwaitedCall {
  /** The child thread whose run waits. */
  threadId: string;
}

export function threadAsks(events: readonly SessionEvent[]): ThreadAwaitedCall[] {
  const uses = new Map<string, Omit<AwaitedCall, "id">>();
  const waiting = new Map<string, string[]>();
  for (const event of events) {
    switch (event.type) {
      case "agent.tool_use":
      case "agent.mcp_tool_use":
      case "agent.custom_tool_use":
        // Only a subagent's call, cross-posted here, names its thread.
        if (event.session_thread_id) uses.set(event.id, awaitedUseOf(event));
        break;
      case "session.thread_status_idle":
        if (event.stop_reason.type === "requires_action")
          waiting.set(event.session_thread_id, event.stop_reason.event_ids);
        else waiting.delete(event.session_thread_id);
        break;
      case "session.thread_status_running":
      case "session.thread_status_rescheduled":
      case "session.thread_status_terminated":
        waiting.delete(event.session_thread_id);
        break;
      default:
        break;
    }
  }
  return [...waiting].flatMap(([threadId, ids]) =>
    ids.flatMap((id) => {
      const use = uses.get(id);
      return use ? [{ id, threadId, ...use }] : [];
    }),
  );
}
