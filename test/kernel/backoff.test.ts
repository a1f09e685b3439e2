import { describe, expect, it } from "vitest";
import { Backoff, backoffDelayMs } from "../../src/kernel/backoff.js";

const fixed = (value: number) => () => value;

describe("backoffDelayMs", () => {
  it("doubles from the base and stops at the cap", () => {
    const policy = { baseMs: 100, maxMs: 1_000, jitter: "none" as const };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(policy, n))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    // No failures yet reads as the first wait, never less.
    expect(backoffDelayMs(policy, 0)).toBe(100);
  });

  it("full jitter spreads the wait over [0, ceiling] and is the default", () => {
    const policy = { baseMs: 100, maxMs: 1_000 };
    expect(backoffDelayMs(policy, 3, fixed(0))).toBe(0);
    expect(backoffDelayMs(policy, 3, fixed(0.5))).toBe(200);
    expect(backoffDelayMs(policy, 3, fixed(0.999_999))).toBe(400);
  });

  it("equal jitter keeps at least half the ceiling", () => {
    const policy = { baseMs: 1_000, maxMs: 30_000, jitter: "equal" as const };
    expect(backoffDelayMs(policy, 1, fixed(0))).toBe(500);
    expect(backoffDelayMs(policy, 1, fixed(1))).toBe(1_000);
    expect(backoffDelayMs(policy, 10, fixed(0))).toBe(15_000);
  });

  it("an unbounded cap keeps doubling", () => {
    expect(backoffDelayMs({ baseMs: 250, maxMs: Number.POSITIVE_INFINITY, jitter: "none" }, 4)).toBe(2_000);
  });
});

describe("Backoff", () => {
  it("answers null once the attempts are spent, and starts over after reset", () => {
    const backoff = new Backoff({ baseMs: 10, maxMs: 100, jitter: "none", maxAttempts: 3 });
    expect(backoff.next()).toBe(10);
    expect(backoff.next()).toBe(20);
    expect(backoff.next()).toBeNull();
    expect(backoff.failures).toBe(3);
    backoff.reset();
    expect(backoff.failures).toBe(0);
    expect(backoff.next()).toBe(10);
  });

  it("cuts the last wait to the deadline on the injected clock, then answers null", () => {
    let now = 1_000;
    const clock = { now: () => now };
    const backoff = new Backoff({ baseMs: 100, maxMs: 10_000, jitter: "none", deadlineMs: 500 }, { clock });
    expect(backoff.next()).toBe(100);
    now += 100;
    expect(backoff.next()).toBe(200);
    now += 200;
    // 200 ms left of the deadline; the ceiling is 400.
    expect(backoff.next()).toBe(200);
    now += 200;
    expect(backoff.next()).toBeNull();
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it("draws its jitter from the injected random", () => {
    const backoff = new Backoff({ baseMs: 1_000, maxMs: 1_000 }, { random: fixed(0.25) });
    expect(backoff.next()).toBe(250);
  });
});
