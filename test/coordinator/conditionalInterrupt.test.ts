/**
 * An interrupt sent because a client went away (`onlyWhileWorking`) stops a queued or executing
 * run, and is a no-op once the turn ended or parked on answers: the calls that wait keep waiting.
 */
import { describe, expect, it } from "vitest";
import type { PendingAction } from "../../src/coordinator/facts.js";
import { planInputs } from "../../src/coordinator/inputRules.js";
import type { InputContext, SessionRecord } from "../../src/coordinator/ports.js";

const NOW = 1_700_000_000_000;

function context(runState: string | null, pending: PendingAction[] = []): InputContext {
  const session = {
    id: "sesn_1",
    threadId: "sthr_1",
    status: runState === null || runState === "awaiting" ? "idle" : "running",
    pending,
    archivedAt: null,
  } as unknown as SessionRecord;
  return {
    session,
    activeRun: runState === null ? null : { id: "run_1", state: runState, epoch: 1 },
    openModelRequest: null,
  };
}

describe("an interrupt only while working", () => {
  it.each(["queued", "claimed"])("cancels a %s run like any interrupt", (state) => {
    const plan = planInputs(context(state), [{ kind: "interrupt", onlyWhileWorking: true }], NOW);
    expect(plan.effects).toEqual([{ kind: "cancel" }]);
    expect(plan.echoIds).toHaveLength(1);
  });

  it("writes nothing when the run parked on answers, which keep waiting", () => {
    const waiting: PendingAction[] = [{ eventId: "sevt_call", kind: "client_tool_result" }];
    const plan = planInputs(
      context("awaiting", waiting),
      [{ kind: "interrupt", onlyWhileWorking: true }],
      NOW,
    );
    expect(plan).toEqual({ facts: [], effects: [], echoIds: [] });
    // The unconditional interrupt does drop them: the condition is what keeps them.
    const plain = planInputs(context("awaiting", waiting), [{ kind: "interrupt" }], NOW);
    expect(plain.effects).toEqual([{ kind: "cancel" }]);
  });

  it("writes nothing when no run is active", () => {
    const plan = planInputs(context(null), [{ kind: "interrupt", onlyWhileWorking: true }], NOW);
    expect(plan).toEqual({ facts: [], effects: [], echoIds: [] });
  });
});
