import { describe, expect, it } from "vitest";
import { EMPTY_METER, EMPTY_USAGE } from "../../src/coordinator/facts.js";
import type { CommittedTypedFact, FactPayload } from "../../src/coordinator/factVocabulary.js";
import { activeMsAt, meterAfter, meterOfHistory } from "../../src/coordinator/sessionMeter.js";
import { projectFacts } from "../../src/coordinator/sessionProjection.js";

let seq = 0;
const at = (createdAt: number, payload: FactPayload): CommittedTypedFact => ({
  id: `sevt_${++seq}`,
  sessionId: "sesn_1",
  threadId: "sthr_1",
  seq,
  createdAt,
  ...payload,
});
const end = (model: string, inputTokens: number): CommittedTypedFact => ({
  ...at(0, { kind: "status_rescheduled" }),
  kind: "model_request_end",
  startId: "sevt_0",
  isError: false,
  provider: "anthropic",
  model,
  usage: { ...EMPTY_USAGE, inputTokens },
});

describe("the session meter", () => {
  it("sums list cost exactly and counts only the time spent running", () => {
    const history = [
      at(1_000, { kind: "status_running" }),
      { ...end("claude-sonnet-4-6", 10_000), createdAt: 1_500 },
      at(1_500, { kind: "status_idle", reason: { kind: "turn_ended" } }),
      at(9_000, { kind: "status_running" }),
      { ...end("claude-sonnet-4-6", 5), createdAt: 9_250 },
    ];
    const meter = meterOfHistory(history);
    // 10,005 tokens at $3 per million: 3.0015 cents, in nano-cents.
    expect(meter.listCost).toBe("3001500000");
    expect(meter.activeMs).toBe(500);
    expect(meter.runningSince).toBe(9_000);
    expect(activeMsAt(meter, 10_000)).toBe(1_500);
  });

  it("a compaction's summary request is priced at the model that wrote it", () => {
    const compacted = (model: string): CommittedTypedFact => ({
      ...at(5, { kind: "status_rescheduled" }),
      kind: "context_compacted",
      summary: "s",
      throughSeq: 1,
      model,
      usage: { ...EMPTY_USAGE, outputTokens: 1_000_000 },
    });
    // $15 per million output tokens of claude-sonnet-4-6; the offline model is free.
    expect(meterOfHistory([compacted("claude-sonnet-4-6")]).listCost).toBe(String(1_500n * 1_000_000_000n));
    expect(meterOfHistory([compacted("offline")]).listCost).toBe("0");
  });

  it("a grader's requests count in the session's tokens and are priced at its model", () => {
    const verdict = (model: string | null): CommittedTypedFact => ({
      ...at(5, { kind: "status_rescheduled" }),
      kind: "outcome_evaluation_end",
      outcomeId: "outc_1",
      startId: "sevt_s",
      iteration: 0,
      result: "satisfied",
      explanation: "ok",
      model,
      usage: { ...EMPTY_USAGE, inputTokens: 1_000_000, outputTokens: 10 },
    });
    // $3 per million input and $15 per million output tokens of claude-sonnet-4-6, in nano-cents.
    expect(meterOfHistory([verdict("claude-sonnet-4-6")]).listCost).toBe(String(300_015n * 1_000_000n));
    // An evaluation ended without a request (an interrupt) costs nothing.
    expect(meterOfHistory([verdict(null)]).listCost).toBe("0");
    const projected = projectFacts(
      { status: "running", pending: [], usage: EMPTY_USAGE, meter: EMPTY_METER },
      [verdict("claude-sonnet-4-6")],
      5,
    );
    expect(projected.usage).toEqual({ ...EMPTY_USAGE, inputTokens: 1_000_000, outputTokens: 10 });
  });

  it("a request on a model without a list price leaves the cost unmeasurable for good", () => {
    const meter = meterAfter(EMPTY_METER, [end("a2a:https://agent.example/card", 1)], 1);
    expect(meter.listCost).toBeNull();
    expect(meterAfter(meter, [end("claude-sonnet-4-6", 1)], 2).listCost).toBeNull();
  });

  it("a terminated session stops running and keeps when it ended", () => {
    const meter = meterAfter(EMPTY_METER, [at(100, { kind: "status_running" })], 100);
    const ended = meterAfter(meter, [at(400, { kind: "status_terminated" })], 400);
    expect(ended).toMatchObject({ activeMs: 300, runningSince: null, endedAt: 400 });
    expect(activeMsAt(ended, 10_000)).toBe(300);
  });
});
