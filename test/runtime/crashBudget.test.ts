import { afterEach, describe, expect, it } from "vitest";
import type { ProviderRouter } from "../../src/providers/ports.js";
import { createProviderRouter } from "../../src/providers/router.js";
import { DEFAULT_RETRY_POLICY } from "../../src/runtime/retryPolicy.js";
import { TurnRunner } from "../../src/runtime/turnRunner.js";
import { TieredSandboxProvider } from "../../src/sandbox/tieredProvider.js";
import { recordingMetrics } from "../support/recordingMetrics.js";
import { sessionWithQueuedRun } from "../support/storeFixtures.js";

const LEASE_MS = 1_000;
const CRASH_BUDGET = 5;

type Fixture = Awaited<ReturnType<typeof sessionWithQueuedRun>>;
let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.handle.close();
  fx = undefined;
});

/** A model that must never be called: a run past its crash budget ends without asking it. */
/** No tier at all: a run that reached a Hand tool would get a refusal, never a sandbox. */
const noSandboxes = new TieredSandboxProvider({});
const untouchable: ProviderRouter = {
  select: () => {
    throw new Error("the model was called for a run that exhausted its crash budget");
  },
  contextWindow: () => 200_000,
  describe: () => [],
};

describe("the crash budget", () => {
  it("a run whose worker keeps crashing ends in a terminal state with a clear error instead of looping", async () => {
    fx = await sessionWithQueuedRun();
    // Each claim whose lease lapses without a commit is a crash: the next claim counts it.
    let activation = (await fx.stores.dispatch.claim("w0", LEASE_MS))!;
    for (let crash = 1; crash <= CRASH_BUDGET + 1; crash++) {
      fx.clock.advance(LEASE_MS + 1);
      activation = (await fx.stores.dispatch.claim(`w${crash}`, LEASE_MS))!;
      expect(activation.crashCount).toBe(crash);
    }
    const stores = fx.stores;
    const metrics = recordingMetrics();
    const outcome = await new TurnRunner(
      activation,
      {
        readThread: (threadId, afterSeq) => stores.history.readThread(threadId, afterSeq),
        commit: (op) => stores.dispatch.commit(op),
        publish: () => {},
        providers: untouchable,
        sandboxes: noSandboxes,
        clock: fx.clock,
        retry: DEFAULT_RETRY_POLICY,
        crashBudget: CRASH_BUDGET,
        modelIdleTimeoutMs: 60_000,
        log: { info: () => {}, warn: () => {} },
        metrics,
      },
      new AbortController().signal,
    ).run();
    expect(outcome).toBe("settled");
    // Counted once, as the run it failed: `awaken_crash_budget_exhausted_total`.
    expect(metrics.calls.filter(([name]) => name === "crashBudgetExhausted")).toHaveLength(1);
    expect(metrics.calls).toContainEqual(["runSettled", "failed"]);

    const history = await stores.history.readThread(fx.session.threadId, 0);
    const [error, idle] = history.slice(-2);
    expect(error?.type).toBe("session.error");
    expect(error?.body).toMatchObject({
      error: { type: "unknown_error", retry_status: { type: "exhausted" } },
    });
    expect(String((error!.body.error as { message: string }).message)).toContain("crashes");
    expect(idle?.type).toBe("session.status_idle");
    expect(idle?.body).toMatchObject({ stop_reason: { type: "retries_exhausted" } });
    // Terminal: nothing is left to claim, and the session takes new input afterwards.
    fx.clock.advance(LEASE_MS + 1);
    expect(await stores.dispatch.claim("w-late", LEASE_MS)).toBeNull();
    expect((await stores.sessions.get(fx.session.workspaceId, fx.session.id))?.status).toBe("idle");
  });

  it("a run within its crash budget is resumed and finishes its turn", async () => {
    fx = await sessionWithQueuedRun();
    await fx.stores.dispatch.claim("w0", LEASE_MS);
    fx.clock.advance(LEASE_MS + 1);
    const activation = (await fx.stores.dispatch.claim("w1", LEASE_MS))!;
    expect(activation.crashCount).toBe(1);
    const stores = fx.stores;
    const outcome = await new TurnRunner(
      activation,
      {
        readThread: (threadId, afterSeq) => stores.history.readThread(threadId, afterSeq),
        commit: (op) => stores.dispatch.commit(op),
        publish: () => {},
        providers: createProviderRouter({}),
        sandboxes: noSandboxes,
        clock: fx.clock,
        retry: DEFAULT_RETRY_POLICY,
        crashBudget: CRASH_BUDGET,
        modelIdleTimeoutMs: 60_000,
        log: { info: () => {}, warn: () => {} },
      },
      new AbortController().signal,
    ).run();
    expect(outcome).toBe("settled");
    const history = await stores.history.readThread(fx.session.threadId, 0);
    expect(history.map((f) => f.type)).toContain("agent.message");
    expect(history.at(-1)?.body).toMatchObject({ stop_reason: { type: "end_turn" } });
  });

  it("a commit the fence refuses is counted by its reason; a run within its budget counts no exhaustion", async () => {
    fx = await sessionWithQueuedRun();
    const stale = (await fx.stores.dispatch.claim("w0", LEASE_MS))!;
    fx.clock.advance(LEASE_MS + 1);
    await fx.stores.dispatch.claim("w1", LEASE_MS);
    const stores = fx.stores;
    const metrics = recordingMetrics();
    const outcome = await new TurnRunner(
      stale,
      {
        readThread: (threadId, afterSeq) => stores.history.readThread(threadId, afterSeq),
        commit: (op) => stores.dispatch.commit(op),
        publish: () => {},
        providers: createProviderRouter({}),
        sandboxes: noSandboxes,
        clock: fx.clock,
        retry: DEFAULT_RETRY_POLICY,
        crashBudget: CRASH_BUDGET,
        modelIdleTimeoutMs: 60_000,
        log: { info: () => {}, warn: () => {} },
        metrics,
      },
      new AbortController().signal,
    ).run();
    expect(outcome).toBe("lost_claim");
    // The reclaimed run's old owner: its first commit is refused as a stale claim.
    expect(metrics.calls).toContainEqual(["fenceRejected", "stale_claim"]);
    expect(metrics.calls).toContainEqual(["commit", "lost_claim"]);
    expect(metrics.calls.some(([name]) => name === "crashBudgetExhausted")).toBe(false);
  });
});
