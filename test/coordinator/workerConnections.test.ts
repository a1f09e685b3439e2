import { describe, expect, it } from "vitest";
import { PRESENCE_GRACE_MS, WorkerConnections } from "../../src/coordinator/workerConnections.js";
import { ManualClock } from "../support/storeFixtures.js";

/** Timers the test fires by hand, each with the delay it was set for. */
function manualTimers() {
  const timers: Array<{ run: () => void; ms: number; cancelled: boolean }> = [];
  return {
    timers,
    setTimer: (run: () => void, ms: number) => {
      const timer = { run, ms, cancelled: false };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
    /** Fires every timer still armed. */
    fire: async () => {
      for (const t of timers.splice(0)) if (!t.cancelled) t.run();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

function setup(lapsed: string[] = ["run_1"]) {
  const clock = new ManualClock();
  const timers = manualTimers();
  const lapses: Array<{ ownerPrefix: string; notRenewedAfter: number }> = [];
  const woken: string[] = [];
  const logs: string[] = [];
  const connections = new WorkerConnections({
    lapseClaimsOf: async (ownerPrefix, notRenewedAfter) => {
      lapses.push({ ownerPrefix, notRenewedAfter });
      return lapsed;
    },
    dispatchReady: (runId) => woken.push(runId),
    clock,
    log: { info: (_f, m) => logs.push(m), warn: (_f, m) => logs.push(m) },
    setTimer: timers.setTimer,
  });
  return { clock, timers, lapses, woken, logs, connections };
}

describe("a remote worker's presence connections", () => {
  it("a dropped connection lapses the worker's claims not renewed since the drop, after the grace, and wakes claims for each run", async () => {
    const t = setup(["run_1", "run_2"]);
    const connection = t.connections.connected("alpha.a1b2");
    t.clock.advance(5_000);
    const droppedAt = t.clock.now();
    connection.closed();
    expect(t.timers.timers.map((x) => x.ms)).toEqual([PRESENCE_GRACE_MS]);
    expect(t.lapses).toEqual([]);
    t.clock.advance(PRESENCE_GRACE_MS);
    await t.timers.fire();
    // The owner prefix ends at the slash: `alpha.a1b2/0`, never `alpha.a1b23/0`.
    expect(t.lapses).toEqual([{ ownerPrefix: "alpha.a1b2/", notRenewedAfter: droppedAt }]);
    expect(t.woken).toEqual(["run_1", "run_2"]);
    expect(t.logs).toEqual(["worker connection dropped; its runs are claimable again"]);
    expect(t.connections.connectedCount()).toBe(0);
  });

  it("a worker that reconnects here within the grace loses nothing", async () => {
    const t = setup();
    t.connections.connected("alpha.a1b2").closed();
    t.connections.connected("alpha.a1b2");
    await t.timers.fire();
    expect(t.lapses).toEqual([]);
    expect(t.connections.connectedCount()).toBe(1);
  });

  it("only the last of a worker's connections to close counts, and a close is counted once", async () => {
    const t = setup();
    const first = t.connections.connected("alpha.a1b2");
    const second = t.connections.connected("alpha.a1b2");
    first.closed();
    first.closed();
    await t.timers.fire();
    expect(t.lapses).toEqual([]);
    second.closed();
    await t.timers.fire();
    expect(t.lapses.map((l) => l.ownerPrefix)).toEqual(["alpha.a1b2/"]);
  });

  it("the replica's own shutdown is no drop: pending lapses are cancelled and later closes start none", async () => {
    const t = setup();
    t.connections.connected("alpha.a1b2").closed();
    const beta = t.connections.connected("beta.c3d4");
    t.connections.close();
    beta.closed();
    await t.timers.fire();
    expect(t.lapses).toEqual([]);
  });

  it("a failed lapse is logged and left to the lease", async () => {
    const clock = new ManualClock();
    const timers = manualTimers();
    const logs: string[] = [];
    const connections = new WorkerConnections({
      lapseClaimsOf: async () => {
        throw new Error("database unreachable");
      },
      dispatchReady: () => {},
      clock,
      log: { info: (_f, m) => logs.push(m), warn: (_f, m) => logs.push(m) },
      setTimer: timers.setTimer,
    });
    connections.connected("alpha.a1b2").closed();
    await timers.fire();
    expect(logs).toEqual(["could not end a dropped worker's leases; they lapse after the lease"]);
  });
});
