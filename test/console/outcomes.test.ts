import { describe, expect, it } from "vitest";
import { outcomeHistory, verdictTone, verdictWords } from "../../src/console/projection/outcomes.js";
import { ev } from "./events.js";
import { oc } from "./multiagentEvents.js";

describe("the outcome verdicts projection", () => {
  it("no outcome: nothing", () => {
    expect(outcomeHistory([ev.user("hi")])).toEqual([]);
  });

  it("each attempt's evaluation with its iteration and verdict; an open one is evaluating", () => {
    const first = oc.start("outc_1", 0);
    const second = oc.start("outc_1", 1);
    const events = [
      oc.define("outc_1", "write the report", 3),
      first,
      oc.ongoing("outc_1", 0),
      oc.ongoing("outc_1", 0),
      oc.end("outc_1", first.id, 0, "needs_revision", "missing `totals`"),
      second,
    ];
    expect(outcomeHistory(events)).toEqual([
      {
        outcomeId: "outc_1",
        description: "write the report",
        maxIterations: 3,
        evaluations: [
          {
            iteration: 0,
            startedAt: first.processed_at,
            result: "needs_revision",
            explanation: "missing `totals`",
            heartbeats: 2,
          },
          { iteration: 1, startedAt: second.processed_at, result: null, explanation: null, heartbeats: 0 },
        ],
      },
    ]);
    const done = outcomeHistory([...events, oc.end("outc_1", second.id, 1, "satisfied", "all there")]);
    expect(done[0]!.evaluations.map((e) => e.result)).toEqual(["needs_revision", "satisfied"]);
  });

  it("every verdict the wire names has its words and tone; an unknown one shows as sent", () => {
    const verdicts = ["satisfied", "needs_revision", "max_iterations_reached", "failed", "interrupted"];
    expect(verdicts.map(verdictWords)).toEqual([
      "satisfied",
      "needs revision",
      "max iterations reached",
      "failed",
      "interrupted",
    ]);
    expect(verdicts.map(verdictTone)).toEqual(["ok", "pending", "bad", "bad", "bad"]);
    expect(verdictWords(null)).toBe("grader evaluating");
    expect(verdictWords("something_new")).toBe("something_new");
  });

  it("an end without a start in this history (an interrupt closing an outcome) still counts", () => {
    const history = outcomeHistory([
      oc.define("outc_2", "task", null),
      oc.end("outc_2", "sevt_unseen", 0, "interrupted", "interrupted by a user"),
    ]);
    expect(history[0]!.evaluations).toMatchObject([{ iteration: 0, result: "interrupted" }]);
  });

  it("keeps outcomes apart, in the order they were defined", () => {
    const a = oc.start("outc_a", 0);
    const b = oc.start("outc_b", 0);
    const history = outcomeHistory([
      oc.define("outc_a", "first", 1),
      a,
      oc.end("outc_a", a.id, 0, "max_iterations_reached", "ran out"),
      oc.define("outc_b", "second", 2),
      b,
      oc.end("outc_b", b.id, 0, "failed", "grader unusable: no verdict"),
    ]);
    expect(history.map((o) => [o.outcomeId, o.description, o.evaluations.map((e) => e.result)])).toEqual([
      ["outc_a", "first", ["max_iterations_reached"]],
      ["outc_b", "second", ["failed"]],
    ]);
  });
});
