/**
 * The claim long-poll of the worker routes, against a fake coordinator (a queue of claimable runs
 * and a dispatch signal the test fires): one signal wakes one waiting claim, polling alone still
 * finds every run, and a claim whose client hung up never swallows a wake-up.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Activation } from "../../src/coordinator/ports.js";
import { workerTransportRoutes } from "../../src/edge/worker-transport/workerRoutes.js";
import { HttpWorkerTransport } from "../../src/worker/httpTransport.js";
import type { WorkerTransport } from "../../src/worker/ports.js";

const TOKEN = "worker-token-claim-wakeups-01";

interface FakeCoordinator {
  gateway: WorkerTransport;
  /** Makes a run claimable (without a signal). */
  offer(runId: string): void;
  /** The dispatch signal: one run (`runId`, or one it does not name) became claimable. */
  signal(runId?: string): void;
  claims: number;
  released: string[];
  /**
   * Holds the next claim until the test lets it go on; `"empty"` makes it find nothing, as a
   * database query whose snapshot predates the run would.
   */
  holdNextClaim(): Promise<(answer?: "empty") => void>;
}

/** A complete activation of `runId` (the worker's HTTP transport checks the answer's shape). */
function activationOf(runId: string, owner: string): Activation {
  return {
    runId,
    sessionId: "sesn_fake",
    threadId: "thrd_fake",
    workspaceId: "wrkspc_fake",
    owner,
    epoch: 1,
    leaseExpiresAt: 1,
    crashCount: 0,
    agent: {
      workspaceId: "wrkspc_fake",
      agentId: "agent_fake",
      version: 1,
      fingerprint: "f",
      definition: {} as Activation["agent"]["definition"],
      publishedAt: 1,
    },
    environment: { id: "env_fake", revision: 1, config: { type: "self_hosted" } },
    history: [],
    // Set by the claiming store for the coordinator process only.
    claimableSince: 1,
    reclaimed: false,
    captureRequest: null,
    captureContent: false,
  };
}

function fakeCoordinator(): FakeCoordinator {
  const runs: string[] = [];
  const listeners = new Set<(runId: string | null) => void>();
  let hold: ((proceed: (answer?: "empty") => void) => void) | null = null;
  const fake: FakeCoordinator = {
    claims: 0,
    released: [],
    offer: (runId) => runs.push(runId),
    signal: (runId) => {
      for (const listener of [...listeners]) listener(runId ?? null);
    },
    holdNextClaim: () => new Promise((resolve) => (hold = resolve)),
    gateway: {
      claim: async (owner) => {
        fake.claims += 1;
        if (hold) {
          const held = hold;
          hold = null;
          const answer = await new Promise<"empty" | undefined>((proceed) => held(proceed));
          if (answer === "empty") return null;
        }
        const runId = runs.shift();
        return runId ? activationOf(runId, owner) : null;
      },
      renew: async () => true,
      release: async (runId) => {
        fake.released.push(runId);
        runs.unshift(runId);
      },
      commit: async () => {
        throw new Error("not used");
      },
      readThread: async () => [],
      publish: () => {},
      onWork: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      onRunCancelled: () => () => {},
    },
  };
  return fake;
}

let app: FastifyInstance;
let url: string;
let coordinator: FakeCoordinator;

beforeEach(async () => {
  coordinator = fakeCoordinator();
  // An aborted fetch leaves its socket half-open for a few seconds: do not wait for it on close.
  app = Fastify({ forceCloseConnections: true });
  app.register(async (scope) =>
    workerTransportRoutes(scope, {
      gateway: coordinator.gateway,
      runAgent: async () => null,
      token: TOKEN,
      leaseMs: 5_000,
      pollMs: 50,
      // Claims only: no credential is ever asked for here.
      credentials: {
        custody: {
          open: () => Promise.reject(new Error("not under test")),
          secretVariables: () => Promise.reject(new Error("not under test")),
          openSecret: () => Promise.reject(new Error("not under test")),
        },
        runSession: () => Promise.reject(new Error("not under test")),
      },
    }),
  );
  url = await app.listen({ host: "127.0.0.1", port: 0 });
});
afterEach(async () => {
  await app.close();
});

interface ClaimAnswer {
  activation: { runId: string } | null;
  wakeCursor: string;
}

interface PendingClaim {
  owner: string;
  settled: boolean;
  response: Promise<ClaimAnswer | "aborted">;
  hangUp(): void;
}

function longPoll(owner: string, waitMs = 2_000, idleSince?: string): PendingClaim {
  const controller = new AbortController();
  const claim: PendingClaim = {
    owner,
    settled: false,
    hangUp: () => controller.abort(),
    response: fetch(`${url}/v1/awaken/worker/claim`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ owner, waitMs, ...(idleSince !== undefined ? { idleSince } : {}) }),
      signal: controller.signal,
    })
      .then((r) => r.json() as Promise<ClaimAnswer>)
      .catch(() => "aborted" as const)
      .finally(() => {
        claim.settled = true;
      }),
  };
  return claim;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `n` claims have run their first (empty) look and are waiting. */
async function waitingClaims(n: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (coordinator.claims < n) {
    if (Date.now() > deadline) throw new Error(`only ${coordinator.claims} of ${n} claims arrived`);
    await sleep(5);
  }
  await sleep(20);
}

describe("the claim long-poll", () => {
  it("one dispatch signal wakes one waiting claim, not all of them", async () => {
    const claims = ["w/0", "w/1", "w/2", "w/3"].map((owner) => longPoll(owner));
    await waitingClaims(4);
    coordinator.offer("run_a");
    coordinator.signal();
    await sleep(300);

    // The longest-waiting claim took the run; the others still wait (no empty answers, no re-claims).
    expect(claims.map((c) => c.settled)).toEqual([true, false, false, false]);
    expect(await claims[0]!.response).toMatchObject({
      activation: { runId: "run_a", owner: "w/0", epoch: 1 },
    });
    expect(coordinator.claims).toBe(5);

    // The next signal wakes the next claim in line.
    coordinator.offer("run_b");
    coordinator.signal();
    expect(await claims[1]!.response).toMatchObject({ activation: { runId: "run_b" } });
    expect(claims.slice(2).map((c) => c.settled)).toEqual([false, false]);
    for (const c of claims) c.hangUp();
  });

  it("a claim's answer carries nothing the coordinator keeps for itself", async () => {
    coordinator.offer("run_a");
    const answer = await longPoll("w/0").response;
    if (answer === "aborted" || !answer.activation) throw new Error("the claim failed");
    expect(Object.keys(answer.activation)).not.toContain("claimableSince");
    expect(Object.keys(answer.activation)).not.toContain("reclaimed");
    expect(Object.keys(answer.activation)).not.toContain("captureRequest");
    expect(answer.activation).toMatchObject({ runId: "run_a", captureContent: false });
  });

  it("polling alone finds a run that came without a signal", async () => {
    const claim = longPoll("w/0", 200);
    await waitingClaims(1);
    coordinator.offer("run_quiet");
    expect(await claim.response).toMatchObject({ activation: { runId: "run_quiet" } });
  });

  it("claims whose waits run out together poll once between them, and that poll still finds a run", async () => {
    const claims = ["w/0", "w/1", "w/2", "w/3"].map((owner) => longPoll(owner, 300));
    await waitingClaims(4);
    const answers = await Promise.all(claims.map((c) => c.response));
    // Four first looks, then one poll: the others' waits saw that claim start, which looked after
    // they began waiting, so theirs would have found nothing.
    expect(answers.map((a) => (a === "aborted" ? a : a.activation))).toEqual([null, null, null, null]);
    expect(coordinator.claims).toBe(5);

    // A run that came without a signal is found by that one poll.
    const again = ["w/0", "w/1", "w/2"].map((owner) => longPoll(owner, 300));
    await waitingClaims(8);
    coordinator.offer("run_quiet");
    const found = (await Promise.all(again.map((c) => c.response))).filter(
      (a) => a !== "aborted" && a.activation !== null,
    );
    expect(found).toMatchObject([{ activation: { runId: "run_quiet" } }]);
    expect(coordinator.claims).toBe(9);
  });

  it("runs no signal announced are all found within two polls: a look that found one makes the others look", async () => {
    const claims = ["w/0", "w/1", "w/2"].map((owner) => longPoll(owner, 300));
    await waitingClaims(3);
    // Lapsed leases, say: claimable without a signal.
    for (const runId of ["run_a", "run_b", "run_c"]) coordinator.offer(runId);
    const first = await Promise.all(claims.map((c) => c.response));
    const taken = first.flatMap((a) => (a !== "aborted" && a.activation ? [a.activation.runId] : []));
    expect(taken.length).toBeGreaterThanOrEqual(1);

    // The slots that came back empty claim again as idle slots do (with their cursor): their waits
    // end in looks, since the latest look found a run.
    const idle = first.flatMap((a, i) =>
      a !== "aborted" && !a.activation ? [longPoll(`w/${i}`, 300, a.wakeCursor)] : [],
    );
    for (const answer of await Promise.all(idle.map((c) => c.response))) {
      if (answer !== "aborted" && answer.activation) taken.push(answer.activation.runId);
    }
    expect(taken.sort()).toEqual(["run_a", "run_b", "run_c"]);
  });

  it("a signal that lands while a claim is mid-query is kept for it: it looks again at once", async () => {
    const held = coordinator.holdNextClaim();
    const claim = longPoll("w/0", 2_000);
    const proceed = await held;
    // The run and its signal arrive while the claim's first look runs, which misses the run.
    coordinator.offer("run_late");
    coordinator.signal();
    const started = Date.now();
    proceed("empty");
    expect(await claim.response).toMatchObject({ activation: { runId: "run_late" } });
    // Without the kept signal it would have waited its whole long-poll (2 s) before looking again.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(coordinator.claims).toBe(2);
  });

  it("a claim whose client hung up leaves the line: the signal wakes the next one", async () => {
    const gone = longPoll("w/gone");
    await waitingClaims(1);
    const next = longPoll("w/next");
    await waitingClaims(2);
    gone.hangUp();
    await gone.response;
    await sleep(50);

    coordinator.offer("run_a");
    coordinator.signal();
    const started = Date.now();
    expect(await next.response).toMatchObject({ activation: { runId: "run_a" } });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("a woken claim whose client hung up during its look hands the run back and wakes the next", async () => {
    const gone = longPoll("w/gone");
    await waitingClaims(1);
    const next = longPoll("w/next");
    await waitingClaims(2);

    // The signal wakes `gone`; while its look runs, its client hangs up.
    const held = coordinator.holdNextClaim();
    coordinator.offer("run_a");
    coordinator.signal();
    const proceed = await held;
    gone.hangUp();
    await gone.response;
    await sleep(50);
    proceed();

    const started = Date.now();
    expect(await next.response).toMatchObject({ activation: { runId: "run_a", owner: "w/next" } });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(coordinator.released).toEqual(["run_a"]);
  });

  it("a woken claim whose run a claim in flight took makes no look of its own and waits on", async () => {
    const waiting = longPoll("w/wait");
    await waitingClaims(1);
    // Another slot's claim is mid-query when the run turns claimable; its signal wakes `w/wait`.
    const held = coordinator.holdNextClaim();
    const busy = longPoll("w/busy");
    const proceed = await held;
    coordinator.offer("run_a");
    coordinator.signal("run_a");
    await sleep(50);
    const before = coordinator.claims;
    proceed();
    expect(await busy.response).toMatchObject({ activation: { runId: "run_a" } });
    await sleep(150);
    expect(coordinator.claims).toBe(before);
    expect(waiting.settled).toBe(false);

    // Still in line: the next run's signal reaches it.
    coordinator.offer("run_b");
    coordinator.signal("run_b");
    expect(await waiting.response).toMatchObject({ activation: { runId: "run_b", owner: "w/wait" } });
    expect(coordinator.claims).toBe(before + 1);
  });

  /** The cursor a claim answered with (it took `runId`). */
  async function cursorAfterClaiming(owner: string, runId: string): Promise<string> {
    coordinator.offer(runId);
    const answer = await longPoll(owner).response;
    if (answer === "aborted" || answer.activation?.runId !== runId) throw new Error("the claim failed");
    return answer.wakeCursor;
  }

  it("a slot back idle with its cursor waits for a signal before it claims: no claim finds nothing", async () => {
    const cursor = await cursorAfterClaiming("w/0", "run_first");
    const before = coordinator.claims;
    const idle = longPoll("w/0", 2_000, cursor);
    await sleep(150);
    expect(coordinator.claims).toBe(before);
    expect(idle.settled).toBe(false);

    coordinator.offer("run_next");
    coordinator.signal();
    expect(await idle.response).toMatchObject({ activation: { runId: "run_next" } });
    expect(coordinator.claims).toBe(before + 1);
  });

  it("an idle slot's wait still ends in a claim: polling finds a run that came without a signal", async () => {
    const cursor = await cursorAfterClaiming("w/0", "run_first");
    const before = coordinator.claims;
    coordinator.offer("run_quiet");
    const idle = longPoll("w/0", 200, cursor);
    expect(await idle.response).toMatchObject({ activation: { runId: "run_quiet" } });
    expect(coordinator.claims).toBe(before + 1);
  });

  it("a signal that found no claim waiting makes an idle slot claim at once", async () => {
    const cursor = await cursorAfterClaiming("w/0", "run_first");
    // While the slot ran its slice, a run became claimable and nobody was waiting for it.
    coordinator.offer("run_unanswered");
    coordinator.signal();
    const started = Date.now();
    const idle = longPoll("w/0", 2_000, cursor);
    expect(await idle.response).toMatchObject({ activation: { runId: "run_unanswered" } });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("a signal kept for a claim in flight sends one idle slot to claim at once, not each one back", async () => {
    const cursorA = await cursorAfterClaiming("w/a", "run_a");
    const cursorB = await cursorAfterClaiming("w/b", "run_b");
    // A busy slot's claim is mid-query when a run and its signal arrive, and its look takes it.
    const held = coordinator.holdNextClaim();
    const busy = longPoll("w/busy", 2_000);
    const proceed = await held;
    coordinator.offer("run_late");
    coordinator.signal();
    proceed();
    expect(await busy.response).toMatchObject({ activation: { runId: "run_late" } });

    // The kept signal owes one look: the first idle slot back claims at once (and finds nothing),
    // the next one waits for a signal instead of claiming too.
    const before = coordinator.claims;
    const a = longPoll("w/a", 2_000, cursorA);
    await waitingClaims(before + 1);
    const b = longPoll("w/b", 2_000, cursorB);
    await sleep(150);
    expect(coordinator.claims).toBe(before + 1);
    expect(b.settled).toBe(false);
    a.hangUp();
    b.hangUp();
  });

  it("a cursor of another coordinator process (or a made-up one) claims at once", async () => {
    coordinator.offer("run_a");
    const started = Date.now();
    const answer = await longPoll("w/0", 2_000, "0000000000000000:0").response;
    expect(answer).toMatchObject({ activation: { runId: "run_a" } });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("the worker's HTTP transport sends an idle slot's cursor back: its next claim waits, then takes the run", async () => {
    const silent = { info: () => {}, warn: () => {} };
    const transport = new HttpWorkerTransport({
      baseUrl: url,
      token: TOKEN,
      log: silent,
      claimWaitMs: 2_000,
    });
    try {
      coordinator.offer("run_first");
      expect(await transport.claim("w/0", 5_000)).toMatchObject({ runId: "run_first" });
      const before = coordinator.claims;
      // The slot's run settled: nothing it knows of is claimable.
      let settled = false;
      const next = transport.claim("w/0", 5_000, true).finally(() => {
        settled = true;
      });
      await sleep(150);
      expect(coordinator.claims).toBe(before);
      expect(settled).toBe(false);
      coordinator.offer("run_next");
      coordinator.signal();
      expect(await next).toMatchObject({ runId: "run_next" });
      expect(coordinator.claims).toBe(before + 1);
    } finally {
      transport.close();
    }
  });
});
