import { describe, expect, it } from "vitest";
import type { CommittedTypedFact, TypedFact } from "../../src/coordinator/factVocabulary.js";
import {
  HOUR_MS,
  percentile,
  runLatencies,
  runsByHour,
  tokensByModel,
} from "../../src/edge/managed-agents/overviewDto.js";
import { runEnds } from "../../src/edge/managed-agents/runOutcomes.js";

let seq = 0;
const at = (
  createdAt: number,
  fact: { kind: TypedFact["kind"] } & Record<string, unknown>,
): CommittedTypedFact =>
  ({
    ...fact,
    id: `sevt_${++seq}`,
    sessionId: "sesn_1",
    threadId: "sthr_1",
    seq,
    createdAt,
  }) as CommittedTypedFact;
const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 1, cacheCreationInputTokens: 0 };

describe("runEnds", () => {
  it("says how each run ended: completed, failed with its error, interrupted, waiting", () => {
    const ends = runEnds([
      at(0, { kind: "status_running" }),
      at(100, { kind: "status_idle", reason: { kind: "turn_ended" } }),
      at(200, { kind: "status_running" }),
      at(210, {
        kind: "error",
        errorType: "model_request_failed_error",
        message: "bad",
        retryStatus: "exhausted",
        extra: {},
      }),
      at(250, { kind: "status_idle", reason: { kind: "retries_exhausted" } }),
      at(300, { kind: "status_running" }),
      at(310, { kind: "interrupt" }),
      at(320, { kind: "status_idle", reason: { kind: "turn_ended" } }),
      at(400, { kind: "status_running" }),
      at(420, { kind: "status_idle", reason: { kind: "waiting", callIds: ["sevt_x"] } }),
      at(500, { kind: "status_idle", reason: { kind: "other", type: "future_reason" } }),
    ]);
    expect(ends.map((e) => [e.outcome, e.stopReason])).toEqual([
      ["completed", "end_turn"],
      ["failed", "retries_exhausted"],
      ["interrupted", "end_turn"],
      ["waiting", "requires_action"],
      ["other", "future_reason"],
    ]);
    expect(ends[1]?.error).toEqual({ type: "model_request_failed_error", message: "bad" });
    expect(ends[2]?.error).toBeNull();
    // An idle whose run started before the facts read has no start, and so no latency.
    expect(ends[4]?.startedAt).toBeNull();
    expect(runLatencies(ends)).toEqual([100, 50, 20, 20]);
  });
});

describe("the overview's figures", () => {
  it("counts runs in the last 24 whole hours, oldest first, and drops older ones", () => {
    const now = 100 * HOUR_MS + 5;
    const end = (endedAt: number, outcome: "completed" | "failed") => ({
      startedAt: null,
      endedAt,
      outcome,
      stopReason: "",
      error: null,
    });
    const hours = runsByHour(
      [end(now, "completed"), end(now - HOUR_MS, "failed"), end(now - 30 * HOUR_MS, "failed")],
      now,
    );
    expect(hours).toHaveLength(24);
    expect(hours.at(-1)).toMatchObject({ completed: 1, failed: 0 });
    expect(hours.at(-2)).toMatchObject({ completed: 0, failed: 1 });
    expect(hours.reduce((n, h) => n + h.failed, 0)).toBe(1);
  });

  it("takes nearest-rank percentiles", () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([30, 10, 20], 50)).toBe(20);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
    expect(percentile([5], 99)).toBe(5);
  });

  it("sums tokens by provider and model, most first", () => {
    const end = (model: string) =>
      at(0, { kind: "model_request_end", startId: "s", isError: false, provider: "anthropic", model, usage });
    const rows = tokensByModel([end("a"), end("b"), end("b"), at(0, { kind: "status_running" })]);
    expect(rows.map((r) => [r.model, r.requests, r.input_tokens, r.output_tokens])).toEqual([
      ["b", 2, 20, 10],
      ["a", 1, 10, 5],
    ]);
  });
});
