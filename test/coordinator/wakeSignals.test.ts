/**
 * The signals an input append sends: a dispatch names the run it made claimable, so the claims of
 * each process can tell a wake-up for a run they already took from one for a run still waiting.
 */
import { describe, expect, it } from "vitest";
import type { InputOutcome, RunEffect } from "../../src/coordinator/ports.js";
import { InProcessWakeSignals, inputOutcomeSignals } from "../../src/coordinator/wakeSignals.js";

function outcome(effects: RunEffect[], activeRunId: string | null): InputOutcome {
  return { committed: [], plan: { facts: [], effects, echoIds: [] }, activeRunId };
}

describe("wake signals of an input", () => {
  it("a started run's dispatch names the new run", () => {
    expect(inputOutcomeSignals(outcome([{ kind: "start", runId: "run_new" }], null))).toEqual([
      { kind: "dispatch", run: "run_new" },
    ]);
  });

  it("a resumed run's dispatch names the run that was awaiting", () => {
    expect(inputOutcomeSignals(outcome([{ kind: "resume" }], "run_parked"))).toEqual([
      { kind: "dispatch", run: "run_parked" },
    ]);
  });

  it("a cancel wakes no worker: it names the run to stop", () => {
    expect(inputOutcomeSignals(outcome([{ kind: "cancel" }], "run_live"))).toEqual([
      { kind: "cancel", run: "run_live" },
    ]);
  });

  it("in one process, the dispatch listener hears the run, or null when none was named", () => {
    const signals = new InProcessWakeSignals();
    const heard: Array<string | null> = [];
    const off = signals.onDispatchReady((run) => heard.push(run));
    signals.dispatchReady("run_a");
    signals.dispatchReady();
    off();
    signals.dispatchReady("run_after");
    expect(heard).toEqual(["run_a", null]);
  });
});
