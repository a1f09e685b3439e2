/**
 * An in-process worker lends its waiting slots to input appends (`acceptHandOffs`): a reserved slot
 * runs the activation it is handed without a claim, is not woken by signals meanwhile, and waits
 * again when released, taking a signal that came while it was reserved. Time is faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Activation, IdleSlot } from "../../src/coordinator/ports.js";
import { TurnRunner } from "../../src/runtime/turnRunner.js";
import type { WorkerTransport } from "../../src/worker/ports.js";
import { Worker } from "../../src/worker/workerLoop.js";

const POLL_MS = 100;
const SLOTS = 2;

/** A queue the test fills (`offer`, then `signal`), counting claims, that lends slots to the test. */
function lendingQueue() {
  const claimable: string[] = [];
  const claims: string[] = [];
  const listeners = new Set<(runId: string | null) => void>();
  let reserve: (() => IdleSlot | null) | null = null;
  const transport: WorkerTransport = {
    claim: async (owner) => {
      claims.push(owner);
      const runId = claimable.shift();
      return runId === undefined ? null : activation(owner, runId, 1);
    },
    renew: async () => true,
    release: async () => {},
    commit: async () => {
      throw new Error("slices are mocked: nothing commits");
    },
    readThread: async () => [],
    publish: () => {},
    onWork: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signalsEveryRun: true,
    onRunCancelled: () => () => {},
    acceptHandOffs: (lend) => {
      reserve = lend;
      return () => {
        reserve = null;
      };
    },
  };
  return {
    transport,
    claims,
    offer: (runId: string) => claimable.push(runId),
    signal: (runId: string) => {
      for (const listener of listeners) listener(runId);
    },
    reserve: () => reserve?.() ?? null,
    lent: () => reserve !== null,
  };
}

const activation = (owner: string, runId: string, epoch: number) =>
  ({
    runId,
    sessionId: "sesn_handoff",
    threadId: "sthr_handoff",
    workspaceId: "wrkspc_handoff",
    owner,
    epoch,
    leaseExpiresAt: Date.now() + 15_000,
    crashCount: 0,
    agent: {
      workspaceId: "wrkspc_handoff",
      agentId: "agent_handoff",
      version: 1,
      definition: { name: "handoff", model: { id: "offline-handoff" }, tools: [], mcp_servers: [] },
    },
    environment: { id: "env_handoff", revision: 1, config: { type: "self_hosted" } },
    history: [],
  }) as unknown as Activation;

/** Slices that settle at once, recording which run ran under which owner. */
function slicesSettle(ran: Array<{ runId: string; owner: string }>): void {
  vi.spyOn(TurnRunner.prototype, "run").mockImplementation(async function (this: TurnRunner) {
    const { activation: claimed } = this as unknown as { activation: Activation };
    ran.push({ runId: claimed.runId, owner: claimed.owner });
    return "settled";
  });
}

function startWorker(transport: WorkerTransport): Worker {
  const silent = { info() {}, warn() {}, error() {}, debug() {} };
  const runtime = { log: silent } as unknown as ConstructorParameters<typeof Worker>[1];
  const worker = new Worker(transport, runtime, {
    id: "local",
    concurrency: SLOTS,
    leaseMs: 15_000,
    pollMs: POLL_MS,
    drainMs: 1_000,
  });
  worker.start();
  return worker;
}

describe("an in-process worker's slots lent to input appends", () => {
  let worker: Worker | undefined;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  });

  afterEach(async () => {
    const stopped = worker?.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    await stopped;
    worker = undefined;
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("a reserved slot runs the run it is handed without claiming it", async () => {
    const ran: Array<{ runId: string; owner: string }> = [];
    slicesSettle(ran);
    const queue = lendingQueue();
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(0);
    const claimsBefore = queue.claims.length;

    const slot = queue.reserve();
    expect(slot?.owner).toMatch(/^local\.[0-9a-f]+\/\d$/);
    expect(slot?.leaseMs).toBe(15_000);
    slot!.deliver(activation(slot!.owner, "run_handed", 1));
    await vi.advanceTimersByTimeAsync(0);

    expect(ran).toEqual([{ runId: "run_handed", owner: slot!.owner }]);
    // The settled slice left the slot waiting for a signal: no claim was spent on the handed run.
    expect(queue.claims.length).toBe(claimsBefore);
  });

  it("lends each waiting slot once, and none while every slot is reserved or busy", async () => {
    const queue = lendingQueue();
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(0);
    const first = queue.reserve();
    const second = queue.reserve();
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(second!.owner).not.toBe(first!.owner);
    expect(queue.reserve()).toBeNull();
    first!.release();
    const again = queue.reserve();
    expect(again?.owner).toBe(first!.owner);
    again!.release();
    second!.release();
  });

  it("a signal while a slot is reserved wakes another, or waits for the released slot", async () => {
    const ran: Array<{ runId: string; owner: string }> = [];
    slicesSettle(ran);
    const queue = lendingQueue();
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(0);
    const first = queue.reserve()!;
    const second = queue.reserve()!;

    // Both slots are reserved: the signal is kept, and the first slot released takes it at once.
    queue.offer("run_signalled");
    queue.signal("run_signalled");
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual([]);
    first.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual([{ runId: "run_signalled", owner: first.owner }]);

    // The other reservation ends in a hand-off; a poll interval that passed meanwhile is not lost.
    await vi.advanceTimersByTimeAsync(POLL_MS * 3);
    second.deliver(activation(second.owner, "run_handed", 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual([
      { runId: "run_signalled", owner: first.owner },
      { runId: "run_handed", owner: second.owner },
    ]);
  });

  it("a stopping worker lends no slot, runs a run handed to a reserved one, and stops lending", async () => {
    const ran: Array<{ runId: string; owner: string }> = [];
    slicesSettle(ran);
    const queue = lendingQueue();
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(0);
    const slot = queue.reserve()!;
    const stopped = worker.stop();
    expect(queue.reserve()).toBeNull();
    // Claimed for it in a statement that committed: the run is this slot's, drained like any other.
    slot.deliver(activation(slot.owner, "run_handed", 1));
    await vi.advanceTimersByTimeAsync(0);
    await stopped;
    expect(ran).toEqual([{ runId: "run_handed", owner: slot.owner }]);
    expect(queue.lent()).toBe(false);
    worker = undefined;
  });
});
