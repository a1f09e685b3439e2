import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AppendPrecondition } from "../../src/coordinator/ports.js";
import { WorkQueueService } from "../../src/coordinator/workQueueService.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { newId } from "../../src/kernel/ids.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  ManualClock,
  type OpenedStores,
  STORE_BACKENDS,
  type StoreBackend,
  seedQueuedRun,
} from "../support/storeFixtures.js";

// The work queue's store and the input ledger's lease precondition, on every store backend: the
// Kysely stores on SQLite and PostgreSQL, and SQLite's synchronous ledger. Time is a manual clock.

let opened: OpenedStores | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

async function fixture(backend: StoreBackend) {
  const clock = new ManualClock();
  opened = await STORE_BACKENDS[backend](clock);
  const seeded = await seedQueuedRun(opened.stores, clock); // a self_hosted environment and a session
  const work = new WorkQueueService(opened.stores.workQueue, opened.stores.environments, clock);
  const ws = seeded.session.workspaceId;
  const env = seeded.session.environmentId;
  const poll = () => work.poll(ws, env, { blockMs: 0, reclaimOlderThanMs: 5_000, workerId: "w1" });
  return { ...seeded, clock, work, ws, env, poll };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** Appends one user message under `precondition`; returns the error it threw, or null. */
async function sendUnder(fx: Fixture, precondition: AppendPrecondition): Promise<AwakenError | null> {
  const now = fx.clock.now();
  try {
    await fx.stores.ledger.append(
      fx.session.id,
      () => ({
        facts: [
          { id: newId("sevt", now), type: "user.message", body: { content: [{ type: "text", text: "x" }] } },
        ],
        effects: [],
        echoIds: [],
      }),
      now,
      precondition,
    );
    return null;
  } catch (error) {
    if (error instanceof AwakenError) return error;
    throw error;
  }
}

/** Polls, acks and heartbeats the session's item; returns the token's binding. */
async function activeItem(fx: Fixture, ttl = 10) {
  await fx.work.needsWorker(fx.session);
  const polled = (await fx.poll())!;
  await fx.work.ack(fx.ws, fx.env, polled.item.id);
  await fx.work.heartbeat(
    fx.ws,
    fx.env,
    polled.item.id,
    { kind: "sessions_token", workId: polled.item.id, epoch: 1 },
    {
      expected: "NO_HEARTBEAT",
      desiredTtlSeconds: ttl,
    },
  );
  const token = JSON.parse(Buffer.from(polled.secret, "base64url").toString("utf8")).sessions_token as string;
  const binding = (await fx.work.authenticateToken(token))!;
  return { polled, token, binding, precondition: WorkQueueService.leasePrecondition(binding) };
}

describe.each(BACKEND_NAMES)("self-hosted work queue: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
  });

  it("keeps one live item per session, and queues a new one once it stopped", async () => {
    const fx = await fixture(backend);
    await fx.work.needsWorker(fx.session);
    await fx.work.needsWorker(fx.session);
    const page = await fx.work.list(fx.ws, fx.env, { limit: 10, cursor: null });
    expect(page.data.map((w) => w.state)).toEqual(["queued"]);
    const polled = (await fx.poll())!;
    expect(polled.item.epoch).toBe(1);
    expect(await fx.poll()).toBeNull();
    await fx.work.stop(fx.ws, fx.env, polled.item.id, { kind: "api_key" }, true);
    await fx.work.needsWorker(fx.session);
    const next = (await fx.poll())!;
    expect(next.item.id).not.toBe(polled.item.id);
  });

  it("a graceful stop whose worker vanished counts as stopped when the session wakes", async () => {
    const fx = await fixture(backend);
    const { polled } = await activeItem(fx, 5);
    expect((await fx.work.stop(fx.ws, fx.env, polled.item.id, { kind: "api_key" }, false)).state).toBe(
      "stopping",
    );
    fx.clock.advance(5_001);
    expect((await fx.work.get(fx.ws, fx.env, polled.item.id)).state).toBe("stopped");
    await fx.work.needsWorker(fx.session);
    expect((await fx.poll())?.item.id).not.toBe(polled.item.id);
  });

  it("re-delivers a pending item after the reclaim window and a lapsed lease at once, each time with epoch + 1", async () => {
    const fx = await fixture(backend);
    await fx.work.needsWorker(fx.session);
    const first = (await fx.poll())!;
    fx.clock.advance(4_999);
    expect(await fx.poll()).toBeNull();
    expect(await fx.work.stats(fx.ws, fx.env)).toMatchObject({ depth: 0, pending: 1, workersPolling: 1 });
    fx.clock.advance(1);
    const second = (await fx.poll())!;
    expect([second.item.id, second.item.epoch]).toEqual([first.item.id, 2]);
    await fx.work.ack(fx.ws, fx.env, second.item.id);
    const beat = await fx.work.heartbeat(
      fx.ws,
      fx.env,
      second.item.id,
      { kind: "environment_key" },
      {
        expected: "NO_HEARTBEAT",
        desiredTtlSeconds: 3,
      },
    );
    expect(beat).toMatchObject({ state: "active", ttl_seconds: 3, lease_extended: true });
    expect(await fx.poll()).toBeNull();
    fx.clock.advance(3_000);
    expect(await fx.work.stats(fx.ws, fx.env)).toMatchObject({ depth: 1, pending: 0 });
    const third = (await fx.poll())!;
    expect([third.item.id, third.item.epoch, third.item.state]).toEqual([first.item.id, 3, "queued"]);
  });

  it("a send under a sessions token appends only while its delivery holds a live lease", async () => {
    const fx = await fixture(backend);
    const { precondition, polled } = await activeItem(fx, 2);
    const version = await fx.stores.history.threadVersion(fx.session.threadId);
    expect(await sendUnder(fx, precondition)).toBeNull();
    expect(await fx.stores.history.threadVersion(fx.session.threadId)).toBe(version + 1);

    fx.clock.advance(2_000); // the lease lapses
    const lapsed = await sendUnder(fx, precondition);
    expect(lapsed?.code).toBe("work_lease_lost");
    expect(lapsed?.message).toContain("expired");
    expect(await fx.stores.history.threadVersion(fx.session.threadId)).toBe(version + 1);

    const again = (await fx.poll())!; // delivered again: epoch 2
    expect(again.item.id).toBe(polled.item.id);
    await fx.work.ack(fx.ws, fx.env, again.item.id);
    const moved = await sendUnder(fx, precondition);
    expect(moved?.message).toContain("delivered again");
    expect(await sendUnder(fx, { ...precondition, epoch: 2 })).toBeNull();

    await fx.work.stop(fx.ws, fx.env, again.item.id, { kind: "api_key" }, true);
    expect((await sendUnder(fx, { ...precondition, epoch: 2 }))?.message).toContain("stopped");
    expect((await sendUnder(fx, { kind: "work_lease", workId: "work_missing", epoch: 1 }))?.code).toBe(
      "work_lease_lost",
    );
    expect(await fx.stores.history.threadVersion(fx.session.threadId)).toBe(version + 2);
  });

  it("heartbeats compare the last beat exactly; a token of an earlier delivery is refused; stop twice conflicts", async () => {
    const fx = await fixture(backend);
    const { polled } = await activeItem(fx, 10);
    const id = polled.item.id;
    const token1 = { kind: "sessions_token" as const, workId: id, epoch: 1 };
    const current = (await fx.work.get(fx.ws, fx.env, id)).lastHeartbeatAt!;
    fx.clock.advance(1);
    const ok = await fx.work.heartbeat(fx.ws, fx.env, id, token1, {
      expected: new Date(current).toISOString(),
      desiredTtlSeconds: undefined,
    });
    expect(ok.lease_extended).toBe(true);
    const stale = await fx.work
      .heartbeat(fx.ws, fx.env, id, token1, {
        expected: new Date(current).toISOString(),
        desiredTtlSeconds: undefined,
      })
      .catch((e: AwakenError) => e);
    expect(stale).toMatchObject({ code: "heartbeat_precondition_failed", category: "precondition_failed" });
    expect((stale as AwakenError).details?.current_state).toMatchObject({
      state: "active",
      last_heartbeat: ok.last_heartbeat,
    });
    const wrongEpoch = await fx.work
      .heartbeat(
        fx.ws,
        fx.env,
        id,
        { ...token1, epoch: 0 },
        { expected: undefined, desiredTtlSeconds: undefined },
      )
      .catch((e: AwakenError) => e);
    expect(wrongEpoch).toMatchObject({ code: "heartbeat_precondition_failed" });
    await fx.work.stop(fx.ws, fx.env, id, token1, true);
    const twice = await fx.work.stop(fx.ws, fx.env, id, token1, true).catch((e: AwakenError) => e);
    expect(twice).toMatchObject({ code: "work_stopped", category: "conflict", retryable: false });
  });
});

describe.skipIf(postgresUnavailable() !== null)("self-hosted work queue: PostgreSQL races", () => {
  it("concurrent polls from two replicas never deliver the same item twice", async () => {
    const pg = await openTestPostgres();
    try {
      const clock = new ManualClock();
      const a = postgresCoordinatorStores(pg.handle, clock);
      const b = postgresCoordinatorStores(await pg.openReplica(), clock);
      const sessions = [];
      const first = await seedQueuedRun(a, clock);
      sessions.push(first.session);
      for (let i = 0; i < 7; i++) {
        const session = {
          ...first.session,
          id: newId("sesn", clock.now()),
          threadId: newId("sthr", clock.now()),
        };
        await a.sessions.create(session);
        sessions.push(session);
      }
      const workA = new WorkQueueService(a.workQueue, a.environments, clock);
      const workB = new WorkQueueService(b.workQueue, b.environments, clock);
      for (const session of sessions) await workA.needsWorker(session);
      const ws = first.session.workspaceId;
      const env = first.session.environmentId;
      const request = { blockMs: 0, reclaimOlderThanMs: 60_000, workerId: null };
      const polls = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? workA : workB).poll(ws, env, request)),
      );
      const delivered = polls.filter((p) => p !== null).map((p) => p.item.id);
      expect(delivered).toHaveLength(8);
      expect(new Set(delivered).size).toBe(8);
    } finally {
      await pg.dispose();
    }
  });
});
