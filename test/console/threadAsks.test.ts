/**
 * A subagent's asks, as the Console's approvals read them from the primary thread's events: the
 * cross-posted tool use and the child's requires_action idle say what waits; the child's next
 * status says the wait is over; the agent's own asks are not counted here.
 */
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/console/api/wire.js";
import { threadAsks } from "../../src/console/projection/threadAsks.js";
import { th } from "./multiagentEvents.js";

let serial = 0;
const stamp = () => ({
  id: `sevt_ask${++serial}`,
  processed_at: new Date(Date.UTC(2026, 0, 3, 0, 0, serial)).toISOString(),
});

function crossPostedUse(threadId: string | null, command: string): SessionEvent {
  return {
    ...stamp(),
    type: "agent.tool_use",
    name: "bash",
    input: { command },
    evaluated_permission: "ask",
    ...(threadId ? { session_thread_id: threadId } : {}),
  } as SessionEvent;
}

function waitingIdle(threadId: string, ids: string[]): SessionEvent {
  return {
    ...stamp(),
    type: "session.thread_status_idle",
    session_thread_id: threadId,
    agent_name: "researcher",
    stop_reason: { type: "requires_action", event_ids: ids },
    stop_details: null,
  } as SessionEvent;
}

describe("a subagent's asks", () => {
  it("wait while the child's last status is its requires_action idle, and end when it runs again", () => {
    const own = crossPostedUse(null, "echo mine");
    const ask = crossPostedUse("sthr_c", "echo child");
    const idle = waitingIdle("sthr_c", [ask.id]);
    const waiting = threadAsks([own, th.created("sthr_c", "researcher"), ask, idle]);
    expect(waiting).toEqual([
      {
        id: ask.id,
        threadId: "sthr_c",
        name: "bash",
        needs: "approval",
        mcpServer: null,
        input: { command: "echo child" },
      },
    ]);
    expect(threadAsks([own, ask, idle, th.running("sthr_c", "researcher")])).toEqual([]);
    expect(threadAsks([own, ask, idle, th.idle("sthr_c", "researcher")])).toEqual([]);
  });

  it("keep each child's own asks apart", () => {
    const a = crossPostedUse("sthr_a", "echo a");
    const b = crossPostedUse("sthr_b", "echo b");
    const waiting = threadAsks([
      a,
      waitingIdle("sthr_a", [a.id]),
      b,
      waitingIdle("sthr_b", [b.id]),
      th.running("sthr_a", "x"),
    ]);
    expect(waiting.map((call) => [call.threadId, call.id])).toEqual([["sthr_b", b.id]]);
  });
});
