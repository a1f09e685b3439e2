/** What a push config says about the facts committed after its cursor: a pure function of them. */
import { TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import type { CommittedTypedFact, FactPayload } from "../../src/coordinator/factVocabulary.js";
import { notificationsAfter } from "../../src/edge/a2a/push/taskNotifications.js";
import { taskIdOf } from "../../src/edge/a2a/taskIds.js";

const SESSION = "sesn_one";
const TASK = taskIdOf(SESSION, "sevt_0");

function facts(...payloads: FactPayload[]): CommittedTypedFact[] {
  return payloads.map((p, i) => ({
    ...p,
    id: `sevt_${i}`,
    sessionId: SESSION,
    threadId: "thrd_one",
    seq: i + 1,
    createdAt: 1_000 + i,
  })) as CommittedTypedFact[];
}

const user = (text: string): FactPayload => ({ kind: "user_message", content: [{ type: "text", text }] });
const said = (text: string): FactPayload => ({ kind: "agent_message", content: [{ type: "text", text }] });

/** Each notification as `seq:state` or `seq:artifact`. */
function described(result: ReturnType<typeof notificationsAfter>): string[] {
  return result.notifications.map(({ seq, event }) => {
    const p = event.payload;
    if (p?.$case === "statusUpdate") return `${seq}:${TaskState[p.value.status!.state]}`;
    return `${seq}:${p?.$case}`;
  });
}

describe("push notifications from committed facts", () => {
  const turn = facts(
    user("one"),
    { kind: "status_running" },
    said("hi"),
    { kind: "status_idle", reason: { kind: "turn_ended" } },
    user("two"),
  );

  it("each state change and each agent text, once, and the task ends the following", () => {
    const all = notificationsAfter(SESSION, TASK, turn, 1);
    expect(described(all)).toEqual(["2:TASK_STATE_WORKING", "3:artifactUpdate", "4:TASK_STATE_COMPLETED"]);
    expect(all).toMatchObject({ toSeq: 4, finished: true });
    // From a later cursor, only what came after it: nothing is said twice.
    const rest = notificationsAfter(SESSION, TASK, turn.slice(0, 3), 1);
    expect(described(rest)).toEqual(["2:TASK_STATE_WORKING", "3:artifactUpdate"]);
    expect(rest).toMatchObject({ toSeq: 3, finished: false });
    expect(described(notificationsAfter(SESSION, TASK, turn, 3))).toEqual(["4:TASK_STATE_COMPLETED"]);
  });

  it("a failed and a canceled turn end with their state; a later user message ends an unfinished one", () => {
    const failed = facts(
      user("x"),
      { kind: "status_running" },
      { kind: "error", errorType: "x", message: "no", retryStatus: "exhausted", extra: {} },
      { kind: "status_idle", reason: { kind: "retries_exhausted" } },
    );
    expect(described(notificationsAfter(SESSION, TASK, failed, 1))).toEqual([
      "2:TASK_STATE_WORKING",
      "4:TASK_STATE_FAILED",
    ]);
    const canceled = facts(
      user("x"),
      { kind: "status_running" },
      { kind: "interrupt" },
      { kind: "status_idle", reason: { kind: "turn_ended" } },
    );
    expect(described(notificationsAfter(SESSION, TASK, canceled, 2))).toEqual(["4:TASK_STATE_CANCELED"]);
    const superseded = facts(user("x"), { kind: "status_running" }, user("y"));
    const result = notificationsAfter(SESSION, TASK, superseded, 2);
    expect(described(result)).toEqual(["3:TASK_STATE_COMPLETED"]);
    expect(result.finished).toBe(true);
  });

  it("a task that is gone or already ended says nothing more", () => {
    expect(notificationsAfter(SESSION, taskIdOf(SESSION, "sevt_nope"), turn, 1)).toEqual({
      notifications: [],
      toSeq: 1,
      finished: true,
    });
    expect(notificationsAfter(SESSION, TASK, turn, 4)).toMatchObject({ notifications: [], finished: true });
  });
});
