/**
 * The idle slots of an in-process worker (a transport that signals every run): a poll interval in
 * which another slot already looked at the queue is waited again instead of claiming into an empty
 * queue, yet polling still looks at least once per interval (a lapsed lease is announced by no
 * signal) and a signal still wakes a slot at once. Time is faked; the transport counts claims.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Activation } from "../../src/coordinator/ports.js";
import { TurnRunner } from "../../src/runtime/turnRunner.js";
import type { WorkerTransport } from "../../src/worker/ports.js";
import { Worker } from "../../src/worker/workerLoop.js";

const POLL_MS = 100;
const SLOTS = 4;

interface CountingTransport {
  transport: WorkerTransport;
  /** When each claim started, in fake milliseconds. */
  claimedAt: number[];
  /** A dispatch signal: for `runId`, or for something unnamed. */
  signal(runId?: string): void;
}

/** A coordinator with nothing claimable: every claim answers null, as an empty queue does. */
function emptyQueue(signalsEveryRun: boolean): CountingTransport {
  const claimedAt: number[] = [];
  const listeners = new Set<(runId: string | null) => void>();
  const transport: WorkerTransport = {
    claim: async () => {
      claimedAt.push(Date.now());
      return null as Activation | null;
    },
    renew: async () => true,
    release: async () => {},
    commit: async () => {
      throw new Error("nothing is claimed, so nothing commits");
    },
    readThread: async () => [],
    publish: () => {},
    onWork: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signalsEveryRun,
    onRunCancelled: () => () => {},
  };
  const signal = (runId?: string) => {
    for (const listener of listeners) listener(runId ?? null);
  };
  return { transport, claimedAt, signal };
}

/** An activation of `runId` complete enough for the worker loop (its slices are mocked). */
const activation = (owner: string, runId: string) =>
  ({
    runId,
    sessionId: "sesn_lapsed",
    threadId: "thrd_lapsed",
    workspaceId: "wrkspc_lapsed",
    owner,
    epoch: 1,
    leaseExpiresAt: Date.now() + 15_000,
    crashCount: 0,
    agent: {
      workspaceId: "wrkspc_lapsed",
      agentId: "agent_lapsed",
      version: 1,
      definition: { name: "lapsed", model: { id: "offline-lapsed" }, tools: [], mcp_servers: [] },
    },
    environment: { id: "env_lapsed", revision: 1, config: { type: "self_hosted" } },
    history: [],
  }) as unknown as Activation;

/**
 * A coordinator where runs turn claimable with no signal (lapsed leases, say) when the test calls
 * `lapse`: each claim takes one.
 */
function lapsingQueue(): CountingTransport & { lapse(runs: number): void; taken(): number } {
  const queue = emptyQueue(true);
  let claimable = 0;
  let taken = 0;
  const transport: WorkerTransport = {
    ...queue.transport,
    claim: async (owner) => {
      queue.claimedAt.push(Date.now());
      if (claimable === 0) return null;
      claimable -= 1;
      taken += 1;
      return activation(owner, `run_${taken}`);
    },
  };
  return {
    ...queue,
    transport,
    lapse: (runs) => {
      claimable += runs;
    },
    taken: () => taken,
  };
}

/**
 * A coordinator whose runs turn claimable with a signal naming them (`offer`, then `signal`), in
 * the order offered; `holdNextClaim` keeps the next claim in flight until the test lets it answer.
 */
function signalledQueue(): CountingTransport & {
  offer(runId: string): void;
  holdNextClaim(): Promise<() => void>;
  taken: string[];
} {
  const queue = emptyQueue(true);
  const claimable: string[] = [];
  const taken: string[] = [];
  let hold: ((proceed: () => void) => void) | null = null;
  const transport: WorkerTransport = {
    ...queue.transport,
    claim: async (owner) => {
      queue.claimedAt.push(Date.now());
      if (hold) {
        const held = hold;
        hold = null;
        await new Promise<void>((proceed) => held(proceed));
      }
      const runId = claimable.shift();
      if (runId === undefined) return null;
      taken.push(runId);
      return activation(owner, runId);
    },
  };
  return {
    ...queue,
    transport,
    offer: (runId) => claimable.push(runId),
    holdNextClaim: () => new Promise((resolve) => (hold = resolve)),
    taken,
  };
}

/** Slices that run until the worker stops, so the slot that took a run stays busy with it. */
function slicesRunUntilStopped(): void {
  vi.spyOn(TurnRunner.prototype, "run").mockImplementation(function (this: TurnRunner) {
    const { signal } = this as unknown as { signal: AbortSignal };
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve("lost_claim")));
  });
}

function startWorker(transport: WorkerTransport): Worker {
  const silent = { info() {}, warn() {}, error() {}, debug() {} };
  const runtime = { log: silent } as unknown as ConstructorParameters<typeof Worker>[1];
  const worker = new Worker(transport, runtime, {
    id: "idle",
    concurrency: SLOTS,
    leaseMs: 15_000,
    pollMs: POLL_MS,
    drainMs: 1_000,
  });
  worker.start();
  return worker;
}

describe("idle slots of an in-process worker", () => {
  let worker: Worker | undefined;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  });

  afterEach(async () => {
    // Stopping aborts slices still running once the drain deadline passes.
    const stopped = worker?.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    await stopped;
    worker = undefined;
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("looks about once per poll interval, not once per slot", async () => {
    const queue = emptyQueue(true);
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(0);
    const start = Date.now();
    expect(queue.claimedAt).toHaveLength(SLOTS); // each slot's first look

    const intervals = 20;
    await vi.advanceTimersByTimeAsync(intervals * POLL_MS);
    const polls = queue.claimedAt.filter((at) => at > start);
    // One slot per interval claims; the others saw its claim start during their wait and wait again.
    expect(polls.length).toBeLessThanOrEqual(intervals + 1);
    // Polling stays: no interval of two poll periods passes without a look.
    for (let from = start; from + 2 * POLL_MS <= start + intervals * POLL_MS; from += POLL_MS) {
      expect(polls.some((at) => at > from && at <= from + 2 * POLL_MS)).toBe(true);
    }
  });

  it("runs no signal announced go to the idle slots within two intervals, not one per interval", async () => {
    slicesRunUntilStopped();
    const queue = lapsingQueue();
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.claimedAt).toHaveLength(SLOTS);
    // Idle a while, then three runs turn claimable with no signal.
    await vi.advanceTimersByTimeAsync(5 * POLL_MS + POLL_MS / 2);
    queue.lapse(3);
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(queue.taken()).toBe(3);
  });

  it("a signal still wakes a waiting slot at once", async () => {
    const queue = emptyQueue(true);
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(POLL_MS / 2);
    const before = queue.claimedAt.length;
    queue.signal();
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.claimedAt.length).toBe(before + 1);
    expect(queue.claimedAt.at(-1)).toBe(Date.now());
  });

  it("a transport that does not signal every run keeps every slot's own poll", async () => {
    const queue = emptyQueue(false);
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(0);
    const start = Date.now();
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(queue.claimedAt.filter((at) => at > start).length).toBeGreaterThanOrEqual(SLOTS * 10);
  });

  it("a signal for a run that a claim already in flight takes sends no second claim", async () => {
    slicesRunUntilStopped();
    const queue = signalledQueue();
    const held = queue.holdNextClaim();
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(0);
    // Every slot's first look: one is still in flight, the others found nothing and wait.
    expect(queue.claimedAt).toHaveLength(SLOTS);

    // The run turns claimable while that look is in flight, and its signal wakes a waiting slot.
    queue.offer("run_a");
    queue.signal("run_a");
    await vi.advanceTimersByTimeAsync(0);
    // The woken slot waits for the look in flight, which takes the run.
    expect(queue.claimedAt).toHaveLength(SLOTS);
    (await held)();
    await vi.advanceTimersByTimeAsync(POLL_MS / 2);
    expect(queue.taken).toEqual(["run_a"]);
    expect(queue.claimedAt).toHaveLength(SLOTS);
  });

  it("a signal that comes after a claim took its run wakes a slot only for a run nobody looked for", async () => {
    slicesRunUntilStopped();
    const queue = signalledQueue();
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(POLL_MS / 4);
    const before = queue.claimedAt.length;
    // Two runs turn claimable, the older one's signal still on its way: the slot woken for the
    // newer one takes the older one (claims take the oldest first).
    queue.offer("run_b");
    queue.offer("run_a");
    queue.signal("run_a");
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.taken).toEqual(["run_b"]);
    // run_b's signal wakes a slot for run_a, which nobody has looked for yet.
    queue.signal("run_b");
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.taken).toEqual(["run_b", "run_a"]);
    expect(queue.claimedAt.length).toBe(before + 2);
    // A signal for a run taken already, with nothing else announced, wakes nobody (a poll took it).
    queue.offer("run_c");
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(queue.taken).toEqual(["run_b", "run_a", "run_c"]);
    const looks = queue.claimedAt.length;
    queue.signal("run_c");
    await vi.advanceTimersByTimeAsync(POLL_MS / 4);
    expect(queue.claimedAt.length).toBe(looks);
  });

  it("a poll interval in which a signalled run was claimed is waited again", async () => {
    slicesRunUntilStopped();
    const queue = signalledQueue();
    worker = startWorker(queue.transport);
    await vi.advanceTimersByTimeAsync(POLL_MS / 2);
    const before = queue.claimedAt.length;
    queue.offer("run_a");
    queue.signal("run_a");
    // Past the end of every idle slot's interval, not yet at the end of the next one.
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(queue.taken).toEqual(["run_a"]);
    // The woken slot's look only: the others' intervals saw a claim start and find a signalled
    // run, so a look of theirs would find nothing.
    expect(queue.claimedAt.length).toBe(before + 1);
  });
});
