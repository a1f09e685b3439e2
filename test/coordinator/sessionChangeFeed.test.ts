import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionChangeFeed, type WorkspaceThreads } from "../../src/coordinator/sessionChangeFeed.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";

// The session change feed: a hint when one of the workspace's threads commits (another
// workspace's never), batched, at most one a second, one after a quiet spell, and nothing after
// the reader is gone.

const OPTIONS = { batchMs: 100, minIntervalMs: 1_000, safetyMs: 15_000 };
const THREADS: Record<string, string> = { thr_a1: "wrkspc_a", thr_a2: "wrkspc_a", thr_b1: "wrkspc_b" };

function feed(lookup?: WorkspaceThreads["threadsOf"]) {
  const signals = new InProcessWakeSignals();
  const lookups: string[][] = [];
  const threads: WorkspaceThreads = {
    threadsOf:
      lookup ??
      (async (workspaceId, ids) => {
        lookups.push([...ids]);
        return new Set(ids.filter((id) => THREADS[id] === workspaceId));
      }),
  };
  const changes = new SessionChangeFeed(signals, threads, OPTIONS);
  const watch = (workspaceId: string) => {
    const stop = new AbortController();
    let hints = 0;
    changes.watch(workspaceId, () => hints++, stop.signal);
    return { hints: () => hints, stop: () => stop.abort() };
  };
  return { signals, lookups, watch };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the session change feed", () => {
  it("hints on the workspace's commits, batched into one lookup, and never on another workspace's", async () => {
    const { signals, lookups, watch } = feed();
    const a = watch("wrkspc_a");
    const b = watch("wrkspc_b");
    signals.threadCommitted("thr_a1", 0);
    signals.threadCommitted("thr_a2", 4);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.hints()).toBe(1);
    expect(b.hints()).toBe(0);
    expect(lookups).toStrictEqual([
      ["thr_a1", "thr_a2"],
      ["thr_a1", "thr_a2"],
    ]);
    await vi.advanceTimersByTimeAsync(2_000);
    signals.threadCommitted("thr_b1", 1);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.hints()).toBe(1);
    expect(b.hints()).toBe(1);
  });

  it("sends at most one hint a second, keeping the last so no change goes unsaid", async () => {
    const { signals, watch } = feed();
    const a = watch("wrkspc_a");
    for (let i = 1; i <= 5; i++) {
      signals.threadCommitted("thr_a1", i);
      await vi.advanceTimersByTimeAsync(150);
    }
    expect(a.hints()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(a.hints()).toBe(2);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(a.hints()).toBe(2);
  });

  it("hints once after a quiet spell of the safety interval, and not before: an idle workspace costs one read per interval", async () => {
    const { signals, watch } = feed();
    const a = watch("wrkspc_a");
    await vi.advanceTimersByTimeAsync(10_000);
    signals.threadCommitted("thr_a1", 1);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.hints()).toBe(1);
    // The safety timer restarted with that hint: nothing until 15 s after it.
    await vi.advanceTimersByTimeAsync(14_800);
    expect(a.hints()).toBe(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(a.hints()).toBe(2);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(a.hints()).toBe(3);
  });

  it("a failed lookup still hints (read again rather than miss a change)", async () => {
    const { signals, watch } = feed(async () => {
      throw new Error("database away");
    });
    const a = watch("wrkspc_a");
    signals.threadCommitted("thr_b1", 1);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.hints()).toBe(1);
  });

  it("stops listening and hinting when the reader leaves", async () => {
    const { signals, lookups, watch } = feed();
    const a = watch("wrkspc_a");
    a.stop();
    signals.threadCommitted("thr_a1", 1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(a.hints()).toBe(0);
    expect(lookups).toStrictEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
