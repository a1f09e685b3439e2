import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EnvironmentPinMoved } from "../../src/coordinator/environmentPin.js";
import { LocalRegistrar } from "../../src/coordinator/registrar.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { newId } from "../../src/kernel/ids.js";
import type { JsonObject } from "../../src/kernel/json.js";
import { sessionToRow } from "../../src/stores/sql/sessionRows.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  op,
  seedQueuedRun,
  sessionWithQueuedRun,
  TEST_AGENT,
} from "../support/storeFixtures.js";

type Fixture = Awaited<ReturnType<typeof sessionWithQueuedRun>>;
let fx: Fixture;
afterEach(async () => {
  await fx?.handle.close();
});

describe.each(BACKEND_NAMES)("claims and the commit fence: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
  });

  it("a claim's activation carries the thread's committed history", async () => {
    fx = await sessionWithQueuedRun(backend);
    const activation = (await fx.stores.dispatch.claim("w1", 1_000))!;
    const history = await fx.stores.history.readThread(fx.session.threadId, 0);
    expect(history.map((f) => f.type)).toEqual(["user.message"]);
    expect(activation.history).toEqual(history);
  });

  it("a claim says whether its session has resources, so a run without any asks for none", async () => {
    fx = await sessionWithQueuedRun(backend);
    const f = fx;
    expect((await f.stores.dispatch.claim("w1", 60_000))?.sessionHasResources).toBe(false);
    const now = f.clock.now();
    const session = { ...f.session, id: newId("sesn", now), threadId: newId("sthr", now) };
    const resource = {
      id: newId("sesrsc", now),
      workspaceId: session.workspaceId,
      sessionId: session.id,
      type: "github_repository" as const,
      mountPath: "/workspace/repo",
      url: "https://github.com/example/repo",
      checkout: null,
      sealedToken: null,
      tokenRevision: 0,
      createdAt: now,
      updatedAt: now,
    };
    await f.stores.sessions.create(session, [resource]);
    await f.stores.ledger.append(
      session.id,
      () => ({
        facts: [
          { id: newId("sevt", now), type: "user.message", body: { content: [{ type: "text", text: "hi" }] } },
        ],
        effects: [{ kind: "start", runId: newId("run", now) }],
        echoIds: [],
      }),
      now,
    );
    const claimed = await f.stores.dispatch.claim("w2", 60_000);
    expect(claimed?.sessionId).toBe(session.id);
    expect(claimed?.sessionHasResources).toBe(true);
  });

  it("a claim hands back the trace context of the input that started or last resumed its run, after a reclaim too", async () => {
    fx = await sessionWithQueuedRun(backend);
    const f = fx;
    const resumedBy = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 vendor=1";
    const startedBy = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const input = (effect: "resume" | "start", traceContext: string) =>
      f.stores.ledger.append(
        f.session.id,
        () => ({
          facts: [],
          effects: [
            effect === "start" ? { kind: "start", runId: newId("run", f.clock.now()) } : { kind: "resume" },
          ],
          echoIds: [],
          traceContext,
        }),
        f.clock.now(),
      );
    const settle = async (claim: { owner: string; epoch: number }, how: "awaiting" | "done") => {
      const version = await f.stores.history.threadVersion(f.session.threadId);
      // A run parks only on something owed: a client tool call.
      const facts =
        how === "awaiting"
          ? [
              {
                id: newId("sevt", f.clock.now()),
                type: "agent.custom_tool_use",
                body: { name: "x", input: {} },
              },
            ]
          : [];
      const result = await f.stores.dispatch.commit({ ...op(f, claim, version, 0, how), facts });
      expect(result).toMatchObject({ ok: true, receipt: { settled: how } });
    };
    const untraced = (await f.stores.dispatch.claim("w1", 1_000))!;
    expect(untraced.traceContext ?? null).toBeNull();
    await settle(untraced, "awaiting");
    await input("resume", resumedBy);
    const resumed = (await f.stores.dispatch.claim("w2", 1_000))!;
    expect(resumed.traceContext).toBe(resumedBy);
    f.clock.advance(1_001);
    const reclaimed = (await f.stores.dispatch.claim("w3", 1_000))!;
    expect(reclaimed).toMatchObject({ runId: resumed.runId, traceContext: resumedBy });
    await settle(reclaimed, "done");
    await input("start", startedBy);
    expect((await f.stores.dispatch.claim("w4", 1_000))?.traceContext).toBe(startedBy);
  });

  it("a queued run is claimed at epoch 1 and cannot be claimed twice while the lease is live", async () => {
    fx = await sessionWithQueuedRun(backend);
    const a = await fx.stores.dispatch.claim("w1", 1_000);
    expect(a?.epoch).toBe(1);
    expect(await fx.stores.dispatch.claim("w2", 1_000)).toBeNull();
  });

  it("an expired claim is reclaimed with epoch + 1, counted as a crash, and the old owner's commit is rejected", async () => {
    fx = await sessionWithQueuedRun(backend);
    const old = (await fx.stores.dispatch.claim("w1", 1_000))!;
    fx.clock.advance(1_001);
    const next = (await fx.stores.dispatch.claim("w2", 1_000))!;
    expect(next.epoch).toBe(old.epoch + 1);
    expect(next.crashCount).toBe(1);
    const version = await fx.stores.history.threadVersion(fx.session.threadId);
    const stale = await fx.stores.dispatch.commit(op(fx, old, version, 1));
    expect(stale).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    expect(await fx.stores.dispatch.renew(fx.runId, old.owner, old.epoch, 1_000)).toBe(false);
  });

  it("a commit resets the crash budget: the next lapse counts as the first crash again", async () => {
    fx = await sessionWithQueuedRun(backend);
    const first = (await fx.stores.dispatch.claim("w1", 1_000))!;
    fx.clock.advance(1_001);
    const second = (await fx.stores.dispatch.claim("w2", 1_000))!;
    expect(second.crashCount).toBe(1);
    const version = await fx.stores.history.threadVersion(fx.session.threadId);
    expect(await fx.stores.dispatch.commit(op(fx, second, version, 1))).toMatchObject({ ok: true });
    fx.clock.advance(1_001);
    // Progress was made since the first crash: this lapse is the run's first crash again.
    const third = (await fx.stores.dispatch.claim("w3", 1_000))!;
    expect(third.epoch).toBe(first.epoch + 2);
    expect(third.crashCount).toBe(1);
  });

  it("a claim's bookkeeping alone is not progress: the crash count goes on counting until a fact of the conversation", async () => {
    fx = await sessionWithQueuedRun(backend);
    const f = fx;
    await f.stores.dispatch.claim("w1", 1_000);
    /** The next claim after a lapse; it commits `facts` (types) unless none are given. */
    const lapseAndClaim = async (owner: string, types: string[]) => {
      f.clock.advance(1_001);
      const claim = (await f.stores.dispatch.claim(owner, 1_000))!;
      if (types.length > 0) {
        const version = await f.stores.history.threadVersion(f.session.threadId);
        const facts = types.map((type) => ({
          id: newId("sevt", f.clock.now()),
          type,
          body: bookkeepingBody(type),
        }));
        const result = await f.stores.dispatch.commit({ ...op(f, claim, version, 0), facts });
        expect(result).toMatchObject({ ok: true });
      }
      return claim;
    };
    // What a worker dying in every model call commits on each claim: its status and its request's
    // start, then (next claim) the end of the request left open and a retry's error.
    expect(
      (await lapseAndClaim("w2", ["session.status_running", "span.model_request_start"])).crashCount,
    ).toBe(1);
    expect((await lapseAndClaim("w3", ["span.model_request_end", "session.error"])).crashCount).toBe(2);
    // A model's answer is progress: the budget is whole again, the next lapse is crash 1.
    expect((await lapseAndClaim("w4", ["span.model_request_end", "agent.message"])).crashCount).toBe(3);
    expect((await lapseAndClaim("w5", [])).crashCount).toBe(1);
  });

  it("a stale owner reusing its successor's operation id is told its claim is stale", async () => {
    fx = await sessionWithQueuedRun(backend);
    const old = (await fx.stores.dispatch.claim("w1", 1_000))!;
    fx.clock.advance(1_001);
    const next = (await fx.stores.dispatch.claim("w2", 1_000))!;
    const version = await fx.stores.history.threadVersion(fx.session.threadId);
    const landed = await fx.stores.dispatch.commit({ ...op(fx, next, version, 1), opId: "op_shared" });
    expect(landed.ok).toBe(true);
    const late = await fx.stores.dispatch.commit({ ...op(fx, old, version, 1), opId: "op_shared" });
    expect(late).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
  });

  it("a stale epoch cannot settle a run", async () => {
    fx = await sessionWithQueuedRun(backend);
    const old = (await fx.stores.dispatch.claim("w1", 1_000))!;
    fx.clock.advance(1_001);
    await fx.stores.dispatch.claim("w2", 1_000);
    const version = await fx.stores.history.threadVersion(fx.session.threadId);
    const result = await fx.stores.dispatch.commit(op(fx, old, version, 0, "done"));
    expect(result.ok).toBe(false);
    expect(await fx.stores.dispatch.claim("w3", 1_000)).toBeNull(); // still held by w2, not settled
  });

  it("a retried operation returns the original receipt and appends nothing; another payload under its id conflicts", async () => {
    fx = await sessionWithQueuedRun(backend);
    const claim = (await fx.stores.dispatch.claim("w1", 1_000))!;
    const version = await fx.stores.history.threadVersion(fx.session.threadId);
    const operation = op(fx, claim, version, 2);
    const first = await fx.stores.dispatch.commit(operation);
    const retry = await fx.stores.dispatch.commit(operation);
    expect(first.ok && retry.ok && retry.duplicate).toBe(true);
    if (first.ok && retry.ok) expect(retry.receipt).toEqual(first.receipt);
    expect(await fx.stores.history.threadVersion(fx.session.threadId)).toBe(version + 2);
    const conflicting = await fx.stores.dispatch.commit({ ...operation, facts: operation.facts.slice(0, 1) });
    expect(conflicting).toMatchObject({ ok: false, rejection: { kind: "operation_conflict" } });
  });

  it("a commit at a version that moved on is a version conflict and appends nothing", async () => {
    fx = await sessionWithQueuedRun(backend);
    const claim = (await fx.stores.dispatch.claim("w1", 1_000))!;
    const version = await fx.stores.history.threadVersion(fx.session.threadId);
    const result = await fx.stores.dispatch.commit(op(fx, claim, version - 1, 1));
    expect(result).toEqual({ ok: false, rejection: { kind: "version_conflict", currentVersion: version } });
    expect(await fx.stores.history.threadVersion(fx.session.threadId)).toBe(version);
  });

  it("a claim on one run cannot write another session's thread: stale claim, nothing appended there", async () => {
    fx = await sessionWithQueuedRun(backend);
    const claim = (await fx.stores.dispatch.claim("w1", 1_000))!;
    const other = await seedQueuedRun(fx.stores, fx.clock);
    const before = await fx.stores.history.threadVersion(other.session.threadId);
    const foreign = { ...op(fx, claim, before, 1), threadId: other.session.threadId };
    const result = await fx.stores.dispatch.commit(foreign);
    expect(result).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    expect(await fx.stores.history.threadVersion(other.session.threadId)).toBe(before);
  });

  it("a claim whose pinned environment revision is missing fails and claims nothing", async () => {
    fx = await sessionWithQueuedRun(backend);
    const orphan = {
      ...fx.session,
      id: newId("sesn", fx.clock.now()),
      threadId: newId("sthr", fx.clock.now()),
    };
    if (backend === "PostgreSQL stores") {
      // PostgreSQL's session store refuses to pin a revision that is not its environment's newest…
      await expect(fx.stores.sessions.create({ ...orphan, environmentRevision: 99 })).rejects.toThrow(
        EnvironmentPinMoved,
      );
      // …so the row such a session would have (an older build's, say) is written as a row.
      await fx.db
        .insertInto("sessions")
        .values(sessionToRow({ ...orphan, environmentRevision: 99 }))
        .execute();
      await fx.db
        .insertInto("threads")
        .values({ id: orphan.threadId, session_id: orphan.id, created_at: orphan.createdAt })
        .execute();
    } else await fx.stores.sessions.create({ ...orphan, environmentRevision: 99 });
    // The seeded run is claimed first (oldest); the orphan's run is queued after it.
    expect(await fx.stores.dispatch.claim("w1", 1_000)).toMatchObject({ runId: fx.runId });
    fx.clock.advance(1);
    await fx.stores.ledger.append(
      orphan.id,
      () => ({ facts: [], effects: [{ kind: "start", runId: newId("run", fx.clock.now()) }], echoIds: [] }),
      fx.clock.now(),
    );
    await expect(fx.stores.dispatch.claim("w2", 1_000)).rejects.toThrow(/revision 99/);
    // Nothing was claimed: the run is still claimable (and fails the same way again).
    await expect(fx.stores.dispatch.claim("w3", 1_000)).rejects.toThrow(/revision 99/);
  });

  it("a claim says since when its run was claimable and whether it took over a lapsed lease", async () => {
    fx = await sessionWithQueuedRun(backend);
    const queuedAt = fx.clock.now();
    fx.clock.advance(250);
    const first = (await fx.stores.dispatch.claim("w1", 1_000))!;
    expect(first).toMatchObject({ claimableSince: queuedAt, reclaimed: false });
    expect(first.leaseExpiresAt - 1_000 - first.claimableSince!).toBe(250);
    fx.clock.advance(1_400);
    const second = (await fx.stores.dispatch.claim("w2", 1_000))!;
    // Claimable again since its lease lapsed, not since it was queued.
    expect(second).toMatchObject({ claimableSince: first.leaseExpiresAt, reclaimed: true });
    expect(second.leaseExpiresAt - 1_000 - second.claimableSince!).toBe(400);
  });

  it("a preferred run goes before older runs claimable for under a second (PostgreSQL); one waiting longer goes first", async () => {
    fx = await sessionWithQueuedRun(backend);
    const oldest = fx.runId;
    fx.clock.advance(10);
    const younger = (await seedQueuedRun(fx.stores, fx.clock)).runId;
    fx.clock.advance(10);
    const youngest = (await seedQueuedRun(fx.stores, fx.clock)).runId;
    // SQLite serialises its claims, so none can take another's: it ignores the hint, oldest first.
    const honours = backend === "PostgreSQL stores";
    expect((await fx.stores.dispatch.claim("w1", 60_000, youngest))?.runId).toBe(honours ? youngest : oldest);
    // A preferred run no longer claimable: the oldest left, as without a preference.
    expect((await fx.stores.dispatch.claim("w2", 60_000, youngest))?.runId).toBe(honours ? oldest : younger);
    fx.clock.advance(1_500);
    const last = (await seedQueuedRun(fx.stores, fx.clock)).runId;
    // The run left from before has waited past the window: it goes before the preferred one.
    const waited = honours ? younger : youngest;
    expect((await fx.stores.dispatch.claim("w3", 60_000, last))?.runId).toBe(waited);
    expect((await fx.stores.dispatch.claim("w4", 60_000, last))?.runId).toBe(last);
  });

  it("lapsing a gone worker's claims ends their leases now: the next claim takes over at epoch + 1 as a crash and the old owner's commit is refused", async () => {
    fx = await sessionWithQueuedRun(backend);
    const other = await seedQueuedRun(fx.stores, fx.clock);
    const gone = (await fx.stores.dispatch.claim("gone.a1/0", 60_000))!;
    // Another worker whose identity extends the gone one's: the prefix ends at the slash.
    const alive = (await fx.stores.dispatch.claim("gone.a10/0", 60_000))!;
    expect(new Set([gone.runId, alive.runId])).toEqual(new Set([fx.runId, other.runId]));
    fx.clock.advance(10);
    expect(await fx.stores.dispatch.lapseClaimsOf("gone.a1/")).toEqual([gone.runId]);
    // Lapsed once: a second call finds no live lease left.
    expect(await fx.stores.dispatch.lapseClaimsOf("gone.a1/")).toEqual([]);
    const next = (await fx.stores.dispatch.claim("w2.b1/0", 60_000))!;
    expect(next).toMatchObject({ runId: gone.runId, epoch: gone.epoch + 1, crashCount: 1, reclaimed: true });
    expect(await fx.stores.dispatch.claim("w3.c1/0", 60_000)).toBeNull();
    const f = { ...fx, runId: gone.runId, session: gone.runId === fx.runId ? fx.session : other.session };
    const version = await fx.stores.history.threadVersion(f.session.threadId);
    const stale = await fx.stores.dispatch.commit(op(f, gone, version, 1, "done"));
    expect(stale).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    expect(await fx.stores.dispatch.renew(gone.runId, gone.owner, gone.epoch, 60_000)).toBe(false);
    expect(await fx.stores.dispatch.commit(op(f, next, version, 1, "done"))).toMatchObject({ ok: true });
    expect(await fx.stores.dispatch.renew(alive.runId, alive.owner, alive.epoch, 60_000)).toBe(true);
  });

  it("lapsing spares a claim renewed after the given time (its holder came back) and treats the prefix literally", async () => {
    fx = await sessionWithQueuedRun(backend);
    const claim = (await fx.stores.dispatch.claim("w_1.x%/0", 60_000))!;
    fx.clock.advance(100);
    const droppedAt = fx.clock.now();
    fx.clock.advance(100);
    expect(await fx.stores.dispatch.renew(fx.runId, claim.owner, claim.epoch, 60_000)).toBe(true);
    fx.clock.advance(800);
    expect(await fx.stores.dispatch.lapseClaimsOf("w_1.x%/", droppedAt)).toEqual([]);
    // LIKE's wildcards in a prefix match nothing but themselves.
    expect(await fx.stores.dispatch.lapseClaimsOf("w%")).toEqual([]);
    expect(await fx.stores.dispatch.lapseClaimsOf("w__")).toEqual([]);
    expect(await fx.stores.dispatch.claim("w2.b1/0", 60_000)).toBeNull();
    // Not renewed since a later drop: lapsed.
    expect(await fx.stores.dispatch.lapseClaimsOf("w_1.x%/", fx.clock.now())).toEqual([fx.runId]);
    expect((await fx.stores.dispatch.claim("w2.b1/0", 60_000))?.epoch).toBe(claim.epoch + 1);
  });

  it("a released claim (graceful shutdown) is claimable at once, without counting a crash", async () => {
    fx = await sessionWithQueuedRun(backend);
    const claim = (await fx.stores.dispatch.claim("w1", 60_000))!;
    await fx.stores.dispatch.release(fx.runId, claim.owner, claim.epoch);
    const next = (await fx.stores.dispatch.claim("w2", 60_000))!;
    expect(next.epoch).toBe(claim.epoch + 1);
    expect(next.crashCount).toBe(0);
  });
});

describe("the local registrar", () => {
  it("is idempotent on (workspace, agent, version) and fails closed on another fingerprint", async () => {
    fx = await sessionWithQueuedRun();
    const registrar = new LocalRegistrar(fx.stores.catalog, fx.clock);
    const first = await registrar.register(TEST_AGENT);
    fx.clock.advance(10);
    expect(await registrar.register(TEST_AGENT)).toEqual(first);
    const changed = {
      ...TEST_AGENT,
      fingerprint: "other",
      definition: { ...TEST_AGENT.definition, name: "x" },
    };
    const error = await registrar.register(changed).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AwakenError);
    expect((error as AwakenError).code).toBe("publication_conflict");
    expect(await fx.stores.catalog.get(TEST_AGENT.workspaceId, TEST_AGENT.agentId, 1)).toEqual(TEST_AGENT);
  });
});

/** Minimal bodies of the bookkeeping facts, shaped as the runtime writes them. */
function bookkeepingBody(type: string): JsonObject {
  if (type === "span.model_request_end") return { model_request_start_id: "sevt_open", is_error: true };
  if (type === "session.error")
    return {
      error: { type: "unknown_error", message: "model call failed", retry_status: { type: "retrying" } },
    };
  if (type === "agent.message") return { content: [{ type: "text", text: "answer" }] };
  return {};
}
