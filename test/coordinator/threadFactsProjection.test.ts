/**
 * A child thread's creation and status changes are facts of its parent's history, and they are
 * about the child: folding them into the parent's projection (the session's status, what it waits
 * on, its usage and its meter) changes nothing there.
 */
import { describe, expect, it } from "vitest";
import { EMPTY_METER, EMPTY_USAGE } from "../../src/coordinator/facts.js";
import type { TypedFact } from "../../src/coordinator/factVocabulary.js";
import { projectFacts, type SessionProjection } from "../../src/coordinator/sessionProjection.js";

const AT = 1_800_000_000_000;
const running: SessionProjection = {
  status: "running",
  pending: [],
  usage: EMPTY_USAGE,
  meter: { ...EMPTY_METER, runningSince: AT - 5_000 },
};
const content = [{ type: "text", text: "look it up" }];

describe("the threads' facts in the parent's projection", () => {
  it("a child's creation, status changes and messages leave the parent's status, pending, usage and meter alone", () => {
    const facts: TypedFact[] = [
      { id: "sevt_1", kind: "thread_created", thread: "sthr_c", agentName: "researcher", workflowRun: null },
      { id: "sevt_2", kind: "thread_message_sent", toThread: "sthr_c", toAgentName: "researcher", content },
      {
        id: "sevt_3",
        kind: "thread_status",
        thread: "sthr_c",
        agentName: "researcher",
        transition: { to: "idle", reason: { kind: "turn_ended" } },
      },
      {
        id: "sevt_4",
        kind: "thread_status",
        thread: "sthr_c",
        agentName: "researcher",
        transition: { to: "terminated" },
      },
      {
        id: "sevt_5",
        kind: "thread_message_received",
        fromThread: "sthr_c",
        fromAgentName: "researcher",
        content,
      },
    ];
    expect(projectFacts(running, facts, AT)).toEqual(running);
    // The session's own status facts still move it.
    expect(
      projectFacts(
        running,
        [...facts, { id: "sevt_6", kind: "status_idle", reason: { kind: "turn_ended" } }],
        AT,
      ).status,
    ).toBe("idle");
  });
});
