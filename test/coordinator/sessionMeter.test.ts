import { describe, expect, it } from "vitest";
import { EMPTY_METER, EMPTY_USAGE } from "../../src/coordinator/facts.js";
import type { CommittedTypedFact, FactPayload } from "../../src/coordinator/factVocabulary.js";
import { activeMsAt, meterAfter, meterOfHistory } from "../../src/coordinator/sessionMeter.js";

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
