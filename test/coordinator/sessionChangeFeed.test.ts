import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  SessionChangeFeed,
  type SessionReach,
  type WorkspaceThreads,
} from "../../src/coordinator/sessionChangeFeed.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";

// The session change feed: a hint when one of the workspace's threads commits (another
// workspace's never), batched, at most one a second, one after a quiet spell, and nothing after
// the reader is gone.

const OPTIONS = { batchMs: 100, minIntervalMs: 1_000, safetyMs: 15_000 };
const THREADS: Record<string, { workspace: string; agent: string; session: string }> = {
  thr_a1: { workspace: "wrkspc_a", agent: "agent_1", session: "sesn_a1" },
  thr_a2: { workspace: "wrkspc_a", agent: "agent_2", session: "sesn_a2" },
  thr_b1: { workspace: "wrkspc_b", agent: "agent_1", session: "sesn_b1" },
};

function feed(lookup?: WorkspaceThreads["threadsOf"]) {
  const signals = new InProcessWakeSignals();
  const lookups: string[][] = [];
  const threads: WorkspaceThreads = {
    threadsOf:
      lookup ??
      (async (reach, ids) => {
        lookups.push([...ids]);
        return new Set(
          ids.filter(
            (id) =>
              THREADS[id]?.workspace === reach.workspaceId &&
              (reach.agentIds === null || reach.agentIds.includes(THREADS[id]!.agent)) &&
              (reach.sessionId === null || reach.sessionId === THREADS[id]!.session),
          ),
        );
      }),
  };
  const changes = new SessionChangeFeed(signals, threads, OPTIONS);
  const watch = (workspaceId: string, narrower: Partial<SessionReach> = {}) => {
    const stop = new AbortController();
    let hints = 0;
    changes.watch({ workspaceId, agentIds: null, sessionId: null, ...narrower }, () => hints++, stop.signal);
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

  it("a reach narrowed to agents or to one session hears of those sessions alone", async () => {
    const { signals, watch } = feed();
    const agent2 = watch("wrkspc_a", { agentIds: ["agent_2"] });
    const none = watch("wrkspc_a", { agentIds: [] });
    const one = watch("wrkspc_a", { sessionId: "sesn_a1" });
    signals.threadCommitted("thr_a1", 1);
    await vi.advanceTimersByTimeAsync(100);
    expect([agent2.hints(), none.hints(), one.hints()]).toStrictEqual([0, 0, 1]);
    signals.threadCommitted("thr_a2", 1);
    await vi.advanceTimersByTimeAsync(100);
    expect([agent2.hints(), none.hints(), one.hints()]).toStrictEqual([1, 0, 1]);
  });

  it("a batch too large to look up at once hints a whole workspace at once, but a narrower reach only after looking", async () => {
    const { signals, lookups, watch } = feed();
    const whole = watch("wrkspc_a");
    const narrow = watch("wrkspc_a", { sessionId: "sesn_a2" });
    for (let i = 0; i < 450; i++) signals.threadCommitted(`thr_other_${i}`, 1);
    await vi.advanceTimersByTimeAsync(100);
    expect([whole.hints(), narrow.hints()]).toStrictEqual([1, 0]);
    expect(lookups.map((ids) => ids.length)).toStrictEqual([200, 200, 50]);
    await vi.advanceTimersByTimeAsync(2_000);
    for (let i = 0; i < 300; i++) signals.threadCommitted(`thr_other_${i}`, 2);
    signals.threadCommitted("thr_a2", 2);
    await vi.advanceTimersByTimeAsync(100);
    expect([whole.hints(), narrow.hints()]).toStrictEqual([2, 1]);
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
