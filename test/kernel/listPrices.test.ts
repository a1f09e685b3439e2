import { describe, expect, it } from "vitest";
import { listPriceOf, monetaryAmount, requestListCost, wholeCents } from "../../src/kernel/listPrices.js";
import { PUBLISHED_MODEL_IDS } from "../../src/providers/publishedModels.js";

const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadInputTokens: cacheRead,
  cacheCreationInputTokens: cacheWrite,
});

describe("list prices", () => {
  it("prices a request exactly at list price, every counter at its own rate", () => {
    // claude-sonnet-4-6: $3 in, $15 out, $3.75 cache write, $0.30 cache read per million tokens.
    expect(requestListCost("claude-sonnet-4-6", tokens(1_000_000, 0))).toBe(300n * 1_000_000_000n);
    expect(requestListCost("claude-sonnet-4-6", tokens(0, 1_000_000))).toBe(1_500n * 1_000_000_000n);
    expect(requestListCost("claude-sonnet-4-6", tokens(0, 0, 1_000_000, 1_000_000))).toBe(
      (30n + 375n) * 1_000_000_000n,
    );
    // gpt-5-nano's cached input is half a cent per million tokens: still exact.
    expect(requestListCost("gpt-5-nano", tokens(0, 0, 2_000_000))).toBe(1_000_000_000n);
  });

  it("rounds a cost up to whole cents only where it is shown", () => {
    expect(wholeCents(0n)).toBe(0n);
    expect(wholeCents(1n)).toBe(1n);
    expect(wholeCents(1_000_000_000n)).toBe(1n);
    expect(wholeCents(1_000_000_001n)).toBe(2n);
    expect(monetaryAmount(2_500n)).toEqual({ amount: "2500", currency: "USD" });
  });

  it("has no price for remote agents or unknown ids; the offline model is free", () => {
    expect(listPriceOf("a2a")).toBeNull();
    expect(listPriceOf("claude-unpriced-0")).toBeNull();
    expect(requestListCost("claude-unpriced-0", tokens(1, 1))).toBeNull();
    expect(requestListCost("offline", tokens(1_000_000, 1_000_000))).toBe(0n);
  });

  it("prices every published model a provider serves", () => {
    const unpriced = [...PUBLISHED_MODEL_IDS].filter((id) => id !== "a2a" && listPriceOf(id) === null);
    expect(unpriced).toEqual([]);
  });
});
