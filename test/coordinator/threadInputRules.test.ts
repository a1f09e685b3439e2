/**
 * The input rules for a session's child threads, pure: which batches need the children read, how an
 * answer is routed to the child that waits on its call (and only there), how a partial answer keeps
 * the child parked, and what a client may not name.
 */
import { describe, expect, it } from "vitest";
import { decodeFact } from "../../src/coordinator/factCodec.js";
import type { Fact, PendingAction } from "../../src/coordinator/facts.js";
import { planInputs } from "../../src/coordinator/inputRules.js";
import type { ChildThreadState, InputContext, SessionRecord } from "../../src/coordinator/ports.js";

const NOW = 1_700_000_000_000;
const CHILD = "sthr_call_a";

function context(children?: ChildThreadState[], primaryPending?: PendingAction[]): InputContext {
  const session = {
    id: "sesn_1",
    threadId: "sthr_primary",
    status: "running",
    pending: primaryPending ?? [{ eventId: CHILD, kind: "thread_answer" }],
    archivedAt: null,
  } as unknown as SessionRecord;
  return {
    session,
    activeRun: { id: "run_parent", state: "awaiting", epoch: 1 },
    openModelRequest: null,
    ...(children ? { threads: children } : {}),
  };
}

function child(pending: PendingAction[], over: Partial<ChildThreadState> = {}): ChildThreadState {
  return {
    threadId: CHILD,
    agentName: "researcher",
    archived: false,
    version: 5,
    pending,
    activeRun: { id: "run_call_a", state: "awaiting", epoch: 2 },
    openModelRequest: null,
    ...over,
  };
}

const kinds = (facts: readonly Fact[]) => facts.map((f) => decodeFact(f).kind);

describe("inputs routed to child threads", () => {
  it("asks for the children only when an answer is not the primary's and a child may owe it", () => {
    const result = { kind: "tool_result" as const, callId: "sevt_x", content: [], isError: false };
    expect(planInputs(context(), [result], NOW)).toMatchObject({ needsThreads: true });
    // No child waited for: the answer is refused as stale, the children are not read.
    expect(() => planInputs(context(undefined, []), [result], NOW)).toThrow(/not waiting/);
    expect(planInputs(context(), [{ kind: "interrupt" }], NOW)).toMatchObject({ needsThreads: true });
    expect(planInputs(context(undefined, []), [{ kind: "interrupt" }], NOW).needsThreads).toBeUndefined();
    expect(
      planInputs(context(undefined, []), [{ kind: "interrupt", targetThread: CHILD }], NOW),
    ).toMatchObject({ needsThreads: true });
  });

  it("routes a custom tool's result to the child that waits on it and resumes that child only", () => {
    const plan = planInputs(
      context([child([{ eventId: "sevt_call", kind: "client_tool_result" }])]),
      [
        {
          kind: "tool_result",
          callId: "sevt_call",
          content: [{ type: "text", text: "42" }],
          isError: false,
          executor: "client",
        },
      ],
      NOW,
    );
    expect(plan.effects).toEqual([]);
    expect(plan.threads).toHaveLength(1);
    const [routed] = plan.threads!;
    expect(routed?.effects).toEqual([{ kind: "resume" }]);
    expect(kinds(routed!.facts)).toEqual(["tool_result", "status_running"]);
    expect(decodeFact(routed!.facts[0]!)).toMatchObject({ callId: "sevt_call", by: "client", thread: CHILD });
    expect(plan.echoIds).toEqual([routed!.facts[0]!.id]);
    // The primary sees its child running again; nothing of the answer lands there.
    expect(plan.facts.map(decodeFact)).toMatchObject([
      { kind: "thread_status", thread: CHILD, transition: { to: "running" } },
    ]);
  });

  it("keeps a child parked on a partial answer, re-emitting what it still waits for", () => {
    const plan = planInputs(
      context([
        child([
          { eventId: "sevt_a", kind: "confirmation", afterAllow: "server" },
          { eventId: "sevt_b", kind: "confirmation", afterAllow: "server" },
        ]),
      ]),
      [{ kind: "tool_confirmation", callId: "sevt_a", allowed: false, denyMessage: "no" }],
      NOW,
    );
    const [routed] = plan.threads!;
    expect(routed?.effects).toEqual([]);
    expect(routed!.facts.map(decodeFact)).toMatchObject([
      { kind: "tool_confirmation", callId: "sevt_a", allowed: false, thread: CHILD },
      { kind: "tool_result", callId: "sevt_a", isError: true },
      { kind: "status_idle", reason: { kind: "waiting", callIds: ["sevt_b"] } },
    ]);
    expect(plan.facts.map(decodeFact)).toMatchObject([
      { kind: "thread_status", transition: { to: "idle", reason: { callIds: ["sevt_b"] } } },
    ]);
  });

  it("refuses an answer no thread waits for, and a child the client names that is unknown or archived", () => {
    expect(() =>
      planInputs(
        context([child([])]),
        [{ kind: "tool_confirmation", callId: "sevt_none", allowed: true, denyMessage: null }],
        NOW,
      ),
    ).toThrow(/not waiting for a confirmation/);
    expect(() =>
      planInputs(context([child([])]), [{ kind: "interrupt", targetThread: "sthr_other" }], NOW),
    ).toThrow(/"sthr_other" was not found/);
    expect(() =>
      planInputs(context([child([], { archived: true })]), [{ kind: "interrupt", targetThread: CHILD }], NOW),
    ).toThrow(/archived/);
  });

  it("interrupting an idle child records the interrupt on it and leaves the parent alone", () => {
    const plan = planInputs(
      context([child([], { activeRun: null })], []),
      [{ kind: "interrupt", targetThread: CHILD }],
      NOW,
    );
    expect(plan.facts).toEqual([]);
    expect(plan.effects).toEqual([]);
    expect(kinds(plan.threads![0]!.facts)).toEqual(["interrupt"]);
    expect(plan.threads![0]!.effects).toEqual([]);
  });

  it("a parent left waiting only for its children after an answer is running, not asking for one", () => {
    const ctx = context(undefined, [
      { eventId: "sevt_ask", kind: "confirmation", afterAllow: "server" },
      { eventId: CHILD, kind: "thread_answer" },
    ]);
    const asked = { ...ctx, session: { ...ctx.session, status: "idle" as const } };
    const plan = planInputs(
      asked,
      [{ kind: "tool_confirmation", callId: "sevt_ask", allowed: true, denyMessage: null }],
      NOW,
    );
    expect(plan.effects).toEqual([]);
    expect(kinds(plan.facts)).toEqual(["tool_confirmation", "status_running"]);
  });

  it("a workflow step interrupted alone answers its run without a tool result (no call waits on it)", () => {
    const step = "sthr_call_w.0.1";
    const plan = planInputs(
      context(
        [child([], { threadId: step, activeRun: { id: "run_call_w.0.1", state: "claimed", epoch: 1 } })],
        [{ eventId: step, kind: "thread_answer" }],
      ),
      [{ kind: "interrupt", targetThread: step }],
      NOW,
    );
    // The session was running while its parent waited: resumed, it says nothing more.
    expect(kinds(plan.facts)).toEqual(["thread_status", "thread_message_received"]);
    expect(plan.effects).toEqual([{ kind: "resume" }]);
    expect(plan.threads![0]!.effects).toEqual([{ kind: "cancel" }]);
  });
});
