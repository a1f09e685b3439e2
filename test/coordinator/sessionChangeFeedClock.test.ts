import { describe, expect, it } from "vitest";
import { SessionChangeFeed } from "../../src/coordinator/sessionChangeFeed.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import { SteppedClock } from "../support/steppedClock.js";

// The feed's batching, rate limit and quiet-spell hint run on the clock it is given, so a test (or
// a server started on a test clock) moves past them by advancing that clock, never by sleeping.

describe("the session change feed on an injected clock", () => {
  it("batches, rate-limits and hints after a quiet spell on the clock's time alone", async () => {
    const clock = new SteppedClock();
    const signals = new InProcessWakeSignals();
    const threads = { threadsOf: async (_reach: unknown, ids: readonly string[]) => new Set(ids) };
    const feed = new SessionChangeFeed(
      signals,
      threads,
      { batchMs: 100, minIntervalMs: 1_000, safetyMs: 15_000 },
      clock,
    );
    const stop = new AbortController();
    let hints = 0;
    feed.watch({ workspaceId: "wrkspc_a", agentIds: null, sessionId: null }, () => hints++, stop.signal);

    signals.threadCommitted("thr_1", 0);
    await clock.advance(99);
    expect(hints).toBe(0);
    await clock.advance(1);
    expect(hints).toBe(1);

    // Within the rate limit: held back, then delivered once the clock passes it (1 s after the last).
    signals.threadCommitted("thr_1", 1);
    await clock.advance(100);
    expect(hints).toBe(1);
    await clock.advance(899);
    expect(hints).toBe(1);
    await clock.advance(1);
    expect(hints).toBe(2);

    // Quiet: one hint per safety interval.
    await clock.advance(14_999);
    expect(hints).toBe(2);
    await clock.advance(1);
    expect(hints).toBe(3);

    stop.abort();
    expect(clock.pending).toBe(0);
  });
});
