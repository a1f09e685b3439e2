import { describe, expect, it } from "vitest";
import { describeResult, phaseState, workflowRuns } from "../../src/console/projection/workflowRuns.js";
import { ev } from "./events.js";
import { th, wf } from "./multiagentEvents.js";

const PHASES = [
  { id: "ph_plan", name: "plan" },
  { id: "ph_build", name: "build" },
];

describe("the workflow runs projection", () => {
  it("no workflow events: no runs", () => {
    expect(workflowRuns([ev.user("hi"), ev.running()])).toEqual({ runs: [], unattributed: [] });
  });

  it("a created run lists its phases, none started", () => {
    const { runs } = workflowRuns([wf.created("wfr_1", "release", PHASES)]);
    expect(runs).toMatchObject([
      {
        id: "wfr_1",
        name: "release",
        description: "release described",
        status: "created",
        result: null,
        phases: [
          { id: "ph_plan", name: "plan", marks: [] },
          { id: "ph_build", name: "build", marks: [] },
        ],
      },
    ]);
    expect(runs[0]!.phases.map(phaseState)).toEqual(["pending", "pending"]);
  });

  it("follows the status and marks each phase's start and end, in order, then the result", () => {
    const planStart = wf.phaseStarted("wfr_1", "ph_plan");
    const buildStart = wf.phaseStarted("wfr_1", "ph_build");
    const events = [
      wf.created("wfr_1", "release", PHASES),
      wf.running("wfr_1"),
      planStart,
      wf.phaseEnded("wfr_1", "ph_plan", planStart.id),
      buildStart,
    ];
    const midway = workflowRuns(events).runs[0]!;
    expect(midway.status).toBe("running");
    expect(midway.phases.map(phaseState)).toEqual(["ended", "running"]);
    expect(midway.phases[0]!.marks).toEqual([
      { startedId: planStart.id, startedAt: planStart.processed_at, endedAt: expect.any(String) },
    ]);
    const done = workflowRuns([
      ...events,
      wf.phaseEnded("wfr_1", "ph_build", buildStart.id),
      wf.idle("wfr_1"),
      wf.ended("wfr_1", { type: "completed" }),
    ]).runs[0]!;
    expect(done.status).toBe("ended");
    expect(done.phases.map(phaseState)).toEqual(["ended", "ended"]);
    expect(describeResult(done.result)).toBe("completed");
  });

  it("a phase started again keeps every start; only its last decides its state", () => {
    const first = wf.phaseStarted("wfr_1", "ph_plan");
    const second = wf.phaseStarted("wfr_1", "ph_plan");
    const run = workflowRuns([
      wf.created("wfr_1", "retry", PHASES),
      first,
      wf.phaseEnded("wfr_1", "ph_plan", first.id),
      second,
    ]).runs[0]!;
    expect(run.phases[0]!.marks.map((m) => [m.startedId, m.endedAt === null])).toEqual([
      [first.id, false],
      [second.id, true],
    ]);
    expect(phaseState(run.phases[0]!)).toBe("running");
  });

  it("keeps runs apart, attributes errors and threads to their run, and keeps a run-less error aside", () => {
    const { runs, unattributed } = workflowRuns([
      wf.created("wfr_1", "one", PHASES),
      wf.created("wfr_2", "two", []),
      th.created("sthr_a", "researcher", "wfr_2"),
      th.created("sthr_b", "researcher", null),
      wf.error("wfr_2", "step 3 threw"),
      wf.error(null, "too many runs"),
      wf.ended("wfr_2", { type: "error", error: { type: "program_error", message: "step 3 threw" } }),
    ]);
    expect(runs.map((r) => [r.id, r.status, r.threadIds])).toEqual([
      ["wfr_1", "created", []],
      ["wfr_2", "ended", ["sthr_a"]],
    ]);
    expect(runs[1]!.errors).toEqual([{ type: "program_error", message: "step 3 threw" }]);
    expect(describeResult(runs[1]!.result)).toBe("error — program_error: step 3 threw");
    expect(unattributed).toEqual([{ type: "program_error", message: "too many runs" }]);
  });

  it("an event of a run whose creation it never saw still shows, under the run's id", () => {
    const start = wf.phaseStarted("wfr_9", "ph_x");
    const { runs } = workflowRuns([start, wf.ended("wfr_9", { type: "stopped" })]);
    expect(runs).toMatchObject([
      { id: "wfr_9", name: "wfr_9", status: "ended", phases: [{ id: "ph_x", name: "ph_x" }] },
    ]);
    expect(describeResult(runs[0]!.result)).toBe("stopped");
  });
});
