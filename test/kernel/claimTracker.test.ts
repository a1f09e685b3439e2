/**
 * The bookkeeping that keeps a woken claim from looking for a run another claim of the same process
 * already took. Claims are deferred promises the test answers, so every interleaving is explicit.
 */
import { describe, expect, it } from "vitest";
import { ClaimTracker } from "../../src/kernel/claimTracker.js";

interface Found {
  runId: string;
}

/** A claim attempt held until the test answers it with a run (or null: it found nothing). */
function heldClaim(tracker: ClaimTracker): {
  answer(runId: string | null): Promise<void>;
  result: Promise<Found | null>;
} {
  let settle!: (found: Found | null) => void;
  const result = tracker.claim(
    () => new Promise<Found | null>((resolve) => (settle = resolve)),
    (found) => found.runId,
  );
  return {
    result,
    answer: async (runId) => {
      settle(runId === null ? null : { runId });
      await result;
      // The tracker's own accounting runs on the same answer; let it finish.
      await Promise.resolve();
    },
  };
}

/** Whether `promise` has settled after pending microtasks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

describe("claim tracker", () => {
  it("a run announced with no claim in flight is worth looking for", async () => {
    const tracker = new ClaimTracker();
    expect(tracker.announce("run_a")).toBe(true);
    expect(await tracker.worthLooking()).toBe(true);
  });

  it("nothing announced is not worth looking for", async () => {
    expect(await new ClaimTracker().worthLooking()).toBe(false);
  });

  it("a woken claim waits for the claim in flight and looks no more once that claim took the run", async () => {
    const tracker = new ClaimTracker();
    const inFlight = heldClaim(tracker);
    tracker.announce("run_a");
    const worth = tracker.worthLooking();
    expect(await settled(worth)).toBe(false);
    await inFlight.answer("run_a");
    expect(await worth).toBe(false);
  });

  it("a woken claim looks when the claim in flight took another run", async () => {
    const tracker = new ClaimTracker();
    const inFlight = heldClaim(tracker);
    tracker.announce("run_a");
    const worth = tracker.worthLooking();
    await inFlight.answer("run_lapsed");
    expect(await worth).toBe(true);
  });

  it("looks at once while more runs are announced than claims are in flight", async () => {
    const tracker = new ClaimTracker();
    heldClaim(tracker);
    tracker.announce("run_a");
    tracker.announce("run_b");
    expect(await settled(tracker.worthLooking())).toBe(true);
  });

  it("a signal for a run a claim here found first wakes nobody, until that run's slice ended", async () => {
    const tracker = new ClaimTracker();
    await heldClaim(tracker).answer("run_a");
    expect(tracker.announce("run_a")).toBe(false);
    expect(await tracker.worthLooking()).toBe(false);

    // Found first again, then its slice ends: the next signal for it is a new claimability.
    await heldClaim(tracker).answer("run_b");
    tracker.finished("run_b");
    expect(tracker.announce("run_b")).toBe(true);
    expect(await tracker.worthLooking()).toBe(true);
  });

  it("a claim that found nothing clears the runs announced before it started, not those after", async () => {
    const tracker = new ClaimTracker();
    tracker.announce("run_early");
    const empty = heldClaim(tracker);
    tracker.announce("run_late");
    await empty.answer(null);
    // run_late may have turned claimable after the empty claim's snapshot: still worth a look.
    expect(await tracker.worthLooking()).toBe(true);
    await heldClaim(tracker).answer("run_late");
    expect(await tracker.worthLooking()).toBe(false);
  });

  it("a signal without a run stands until a claim started after it answered", async () => {
    const tracker = new ClaimTracker();
    const before = heldClaim(tracker);
    expect(tracker.announce(null)).toBe(true);
    await before.answer("run_a");
    expect(await tracker.worthLooking()).toBe(true);
    await heldClaim(tracker).answer("run_b");
    expect(await tracker.worthLooking()).toBe(false);
  });

  it("polls keep looking only after a claim found a run no signal announced", async () => {
    const tracker = new ClaimTracker();
    tracker.announce("run_a");
    await heldClaim(tracker).answer("run_a");
    expect(await tracker.latestFoundUnannounced()).toBe(false);
    await heldClaim(tracker).answer("run_lapsed");
    expect(await tracker.latestFoundUnannounced()).toBe(true);
    await heldClaim(tracker).answer(null);
    expect(await tracker.latestFoundUnannounced()).toBe(false);
  });

  it("a failed claim tells nothing: polls keep looking and announcements stand", async () => {
    const tracker = new ClaimTracker();
    tracker.announce("run_a");
    const failed = tracker.claim(
      () => Promise.reject(new Error("connection reset")),
      (found: Found) => found.runId,
    );
    await expect(failed).rejects.toThrow("connection reset");
    expect(await tracker.latestFoundUnannounced()).toBe(true);
    expect(await tracker.worthLooking()).toBe(true);
    expect(tracker.claimsStarted).toBe(1);
  });

  it("claims in flight are sent for different announced runs, oldest first", async () => {
    const tracker = new ClaimTracker();
    tracker.announce("run_a");
    tracker.announce(null);
    tracker.announce("run_b");
    const sentFor: Array<string | undefined> = [];
    const answers: Array<(found: Found | null) => void> = [];
    const claim = () =>
      tracker.claim(
        (target) => {
          sentFor.push(target);
          return new Promise<Found | null>((resolve) => answers.push(resolve));
        },
        (found) => found.runId,
      );
    const first = claim();
    const second = claim();
    const third = claim();
    // A signal without a run names nothing to go for; the third claim takes the oldest it finds.
    expect(sentFor).toEqual(["run_a", "run_b", undefined]);
    answers[0]!({ runId: "run_a" });
    await first;
    await Promise.resolve();
    expect(tracker.target()).toBeUndefined();
    answers[1]!(null);
    answers[2]!(null);
    await Promise.all([second, third]);
  });
});
