/** A session's committed facts read as A2A tasks: one per turn, its state folded from its facts. */
import { describe, expect, it } from "vitest";
import type { CommittedTypedFact, FactPayload, ToolCall } from "../../src/coordinator/factVocabulary.js";
import { parseTaskId, taskIdOf } from "../../src/edge/a2a/taskIds.js";
import { projectTasks } from "../../src/edge/a2a/taskProjection.js";

const SESSION = "sesn_one";

function facts(...payloads: Array<FactPayload & { id?: string }>): CommittedTypedFact[] {
  return payloads.map((p, i) => ({
    ...p,
    id: p.id ?? `sevt_${i}`,
    sessionId: SESSION,
    threadId: "thrd_one",
    seq: i + 1,
    createdAt: 1_000 + i,
  })) as CommittedTypedFact[];
}

const user = (text: string): FactPayload => ({ kind: "user_message", content: [{ type: "text", text }] });
const clientCall = (id: string): ToolCall => ({ id, name: "get_weather", input: {}, executor: "client" });
const askedCall = (id: string): ToolCall => ({
  id,
  name: "bash",
  input: {},
  executor: "server",
  permission: { decision: "ask", evaluation: null },
});
const states = (f: CommittedTypedFact[]) => projectTasks(SESSION, f).map((t) => t.tracker.state);

describe("A2A tasks from committed facts", () => {
  it("a task id names its session and user message, and nothing else parses", () => {
    expect(parseTaskId(taskIdOf(SESSION, "sevt_x"))).toEqual({ sessionId: SESSION, factId: "sevt_x" });
    for (const bad of ["", "nope", "sesn_a", ".sevt_x", "agent_a.sevt_x", "sesn_a.b.c"]) {
      expect(parseTaskId(bad)).toBeNull();
    }
  });

  it("each user message opens a task; states follow the turn's idles", () => {
    const f = facts(
      user("one"),
      { kind: "status_running" },
      { kind: "agent_message", content: [{ type: "text", text: "hi" }] },
      { kind: "status_idle", reason: { kind: "turn_ended" } },
      user("two"),
      { kind: "status_running" },
      { kind: "error", errorType: "x", message: "the model refused", retryStatus: "exhausted", extra: {} },
      { kind: "status_idle", reason: { kind: "retries_exhausted" } },
      user("three"),
      { kind: "status_running" },
    );
    const tasks = projectTasks(SESSION, f);
    expect(tasks.map((t) => t.tracker.state)).toEqual(["completed", "failed", "working"]);
    expect(tasks[1]?.tracker.failure).toBe("the model refused");
    expect(tasks[0]?.id).toBe(taskIdOf(SESSION, "sevt_0"));
  });

  it("input-required until every asked call is answered; a partial answer leaves the rest asked", () => {
    const waiting = facts(
      user("go"),
      { kind: "status_running" },
      { kind: "tool_call", call: clientCall("c1") },
      { kind: "tool_call", call: askedCall("c2") },
      { kind: "status_idle", reason: { kind: "waiting", callIds: ["c1", "c2"] } },
      { kind: "tool_result", callId: "c1", executor: "client", by: "client", content: [], isError: false },
      { kind: "status_idle", reason: { kind: "waiting", callIds: ["c2"] } },
    );
    const [task] = projectTasks(SESSION, waiting);
    expect(task?.tracker.state).toBe("input-required");
    expect(task?.tracker.asked.map((a) => [a.call.id, a.answer])).toEqual([["c2", "confirmation"]]);
    const answered = facts(
      ...(waiting as unknown as FactPayload[]),
      { kind: "tool_confirmation", callId: "c2", allowed: true, denyMessage: null },
      { kind: "status_running" },
    );
    expect(states(answered)).toEqual(["working"]);
  });

  it("an allowed self-hosted call waits for its worker: the task is working, not input-required", () => {
    const f = facts(
      user("go"),
      { kind: "status_running" },
      {
        kind: "tool_call",
        call: { ...askedCall("c1"), permission: { decision: "allow", evaluation: null } },
      },
      { kind: "status_idle", reason: { kind: "waiting", callIds: ["c1"] } },
    );
    expect(states(f)).toEqual(["working"]);
  });

  it("an interrupt cancels; a terminal task never changes; a turn folded into the next is completed", () => {
    expect(
      states(
        facts(
          user("a"),
          { kind: "status_running" },
          { kind: "interrupt" },
          {
            kind: "status_idle",
            reason: { kind: "turn_ended" },
          },
        ),
      ),
    ).toEqual(["canceled"]);
    expect(
      states(
        facts(
          user("a"),
          { kind: "status_running" },
          { kind: "status_idle", reason: { kind: "turn_ended" } },
          { kind: "interrupt" },
          { kind: "status_terminated" },
        ),
      ),
    ).toEqual(["completed"]);
    expect(states(facts(user("a"), { kind: "status_running" }, user("b")))).toEqual([
      "completed",
      "submitted",
    ]);
    expect(states(facts(user("a"), { kind: "status_running" }, { kind: "status_terminated" }))).toEqual([
      "failed",
    ]);
  });
});
