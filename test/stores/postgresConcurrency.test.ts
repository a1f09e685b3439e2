import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CoordinatorStores } from "../../src/coordinator/ports.js";
import { newId } from "../../src/kernel/ids.js";
import { openPostgres } from "../../src/stores/postgres/openPostgres.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { KNOWN_MIGRATIONS } from "../../src/stores/sql/migrations/index.js";
import {
  dropSchema,
  freshSchemaName,
  openTestPostgres,
  postgresUnavailable,
  type TestPostgres,
  testDatabaseUrl,
} from "../support/postgresFixtures.js";
import { ManualClock, op, seedQueuedRun } from "../support/storeFixtures.js";

// Two pools on one schema stand for two replicas (or a replica and a remote worker's coordinator):
// every race below runs on two separate connections of the real server, many rounds each.
const ROUNDS = 40;
const LEASE_MS = 60_000;

let pg: TestPostgres | undefined;
let a: CoordinatorStores;
let b: CoordinatorStores;
let clock: ManualClock;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  clock = new ManualClock();
  pg = await openTestPostgres();
  a = postgresCoordinatorStores(pg.handle, clock);
  b = postgresCoordinatorStores(await pg.openReplica(), clock);
});
afterEach(async () => {
  await pg?.dispose();
  pg = undefined;
});

function userMessage(text: string) {
  return {
    id: newId("sevt", clock.now()),
    type: "user.message",
    body: { content: [{ type: "text", text }] },
  };
}

describe("PostgreSQL: claims across replicas", () => {
  it("two replicas racing to claim the same queued run: exactly one wins, every round", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { runId } = await seedQueuedRun(a, clock);
      const claims = await Promise.all([a.dispatch.claim("wa", LEASE_MS), b.dispatch.claim("wb", LEASE_MS)]);
      const winners = claims.filter((c) => c !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toMatchObject({ runId, epoch: 1 });
    }
  });

  it("concurrent claimers skip each other's locked run and take the next one instead of waiting", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const first = await seedQueuedRun(a, clock);
      const second = await seedQueuedRun(a, clock);
      const claims = await Promise.all([a.dispatch.claim("wa", LEASE_MS), b.dispatch.claim("wb", LEASE_MS)]);
      expect(claims.map((c) => c?.runId).sort()).toEqual([first.runId, second.runId].sort());
    }
  });

  it("a claim does not wait for a run whose row another transaction holds (SKIP LOCKED)", async () => {
    const { runId } = await seedQueuedRun(a, clock);
    const other = pg!.handle.db;
    await other.transaction().execute(async (tx) => {
      await tx.selectFrom("runs").select("id").where("id", "=", runId).forUpdate().execute();
      const timeout = new Promise<"waited">((resolve) => setTimeout(() => resolve("waited"), 2_000));
      expect(await Promise.race([b.dispatch.claim("wb", LEASE_MS), timeout])).toBeNull();
    });
    expect(await b.dispatch.claim("wb", LEASE_MS)).toMatchObject({ runId, epoch: 1 });
  });
});

describe("PostgreSQL: the commit fence across replicas", () => {
  it("a stale and a current owner committing at the same version at once: only the current one lands", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const fx = await seedQueuedRun(a, clock);
      const stale = (await a.dispatch.claim("w-stale", 1_000))!;
      clock.advance(1_001);
      const current = (await b.dispatch.claim("w-current", LEASE_MS))!;
      expect(current.runId).toBe(fx.runId);
      const version = await a.history.threadVersion(fx.session.threadId);
      const staleOp = op(fx, stale, version, 2);
      const currentOp = op(fx, current, version, 2);
      const [staleResult, currentResult] = await Promise.all([
        a.dispatch.commit(staleOp),
        b.dispatch.commit(currentOp),
      ]);
      expect(staleResult).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
      expect(currentResult).toMatchObject({ ok: true, duplicate: false });
      const after = await a.history.readThread(fx.session.threadId, version);
      expect(after.map((f) => f.id)).toEqual(currentOp.facts.map((f) => f.id));
      expect(after.map((f) => f.seq)).toEqual([version + 1, version + 2]);
    }
  });

  it("two commits by the holder at one version (a duplicated worker): one lands, the other is a version conflict", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const fx = await seedQueuedRun(a, clock);
      const claim = (await a.dispatch.claim("w1", LEASE_MS))!;
      const version = await a.history.threadVersion(fx.session.threadId);
      const results = await Promise.all([
        a.dispatch.commit(op(fx, claim, version, 2, undefined, 1)),
        b.dispatch.commit(op(fx, claim, version, 3, undefined, 2)),
      ]);
      const landed = results.filter((r) => r.ok);
      expect(landed).toHaveLength(1);
      const landedCount = landed[0]!.ok ? landed[0]!.receipt.eventIds.length : 0;
      expect(results.find((r) => !r.ok)).toEqual({
        ok: false,
        rejection: { kind: "version_conflict", currentVersion: version + landedCount },
      });
      const history = await a.history.readThread(fx.session.threadId, 0);
      expect(history.map((f) => f.seq)).toEqual(history.map((_, i) => i + 1));
    }
  });

  it("a retried operation queued behind its original (with and without facts): the retry gets the original receipt, never an error", async () => {
    for (const factCount of [0, 2]) {
      for (let round = 0; round < ROUNDS / 4; round++) {
        const fx = await seedQueuedRun(a, clock);
        const claim = (await a.dispatch.claim("w1", LEASE_MS))!;
        const version = await a.history.threadVersion(fx.session.threadId);
        const operation = op(fx, claim, version, factCount, round % 2 === 0 ? undefined : "done");
        // Both commits start (and take their statement snapshots) while a third transaction holds
        // the thread row, so whichever goes second decides after the first has committed.
        const racing = await pg!.handle.db.transaction().execute(async (tx) => {
          await tx
            .selectFrom("threads")
            .select("id")
            .where("id", "=", fx.session.threadId)
            .forUpdate()
            .execute();
          const both = Promise.all([a.dispatch.commit(operation), b.dispatch.commit(operation)]);
          await new Promise((resolve) => setTimeout(resolve, 50));
          return { both };
        });
        const results = await racing.both;
        expect(results.every((r) => r.ok)).toBe(true);
        expect(results.map((r) => (r.ok ? r.duplicate : null)).sort()).toEqual([false, true]);
        const [first, second] = results.map((r) => (r.ok ? r.receipt : null));
        expect(first).toEqual(second);
        const after = await a.history.readThread(fx.session.threadId, version);
        expect(after.map((f) => f.id)).toEqual(operation.facts.map((f) => f.id));
      }
    }
  });

  it("user input racing with a commit: both land in order or the commit meets a version conflict, never an error", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const fx = await seedQueuedRun(a, clock);
      const claim = (await a.dispatch.claim("w1", LEASE_MS))!;
      const version = await a.history.threadVersion(fx.session.threadId);
      const input = userMessage(`round ${round}`);
      const [committed, appended] = await Promise.all([
        a.dispatch.commit(op(fx, claim, version, 2)),
        b.ledger.append(fx.session.id, () => ({ facts: [input], effects: [], echoIds: [] }), clock.now()),
      ]);
      const history = await a.history.readThread(fx.session.threadId, 0);
      expect(history.map((f) => f.seq)).toEqual(history.map((_, i) => i + 1));
      expect(appended.committed.map((f) => f.id)).toEqual([input.id]);
      if (committed.ok) {
        expect(history).toHaveLength(version + 3);
      } else {
        expect(committed.rejection).toEqual({ kind: "version_conflict", currentVersion: version + 1 });
        expect(history).toHaveLength(version + 1);
      }
    }
  });

  it("an interrupt racing with a commit: the commit either lands before the cancel or is stale after it", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const fx = await seedQueuedRun(a, clock);
      const claim = (await a.dispatch.claim("w1", LEASE_MS))!;
      const version = await a.history.threadVersion(fx.session.threadId);
      const interrupt = userMessage("stop");
      const [committed] = await Promise.all([
        a.dispatch.commit(op(fx, claim, version, 1)),
        b.ledger.append(
          fx.session.id,
          () => ({ facts: [interrupt], effects: [{ kind: "cancel" }], echoIds: [] }),
          clock.now(),
        ),
      ]);
      const history = await a.history.readThread(fx.session.threadId, 0);
      const isInterrupt = history.map((f) => f.id === interrupt.id);
      if (committed.ok) {
        // The commit landed first: the interrupt is the last fact.
        expect(isInterrupt.at(-1)).toBe(true);
      } else {
        expect(committed.rejection.kind).toMatch(/^(stale_claim|version_conflict)$/);
      }
      // Whatever the order, the worker's claim is gone afterwards.
      expect(await a.dispatch.renew(fx.runId, claim.owner, claim.epoch, LEASE_MS)).toBe(false);
      expect(history.map((f) => f.seq)).toEqual(history.map((_, i) => i + 1));
    }
  });
});

describe("PostgreSQL: input appends across replicas", () => {
  it("inputs racing on one session from two replicas all land once, at consecutive versions, one run started", async () => {
    for (let round = 0; round < ROUNDS / 4; round++) {
      const fx = await seedQueuedRun(a, clock);
      // Out of the way: the session has no active run, so the first input to land starts one and the
      // others (deciding on what they read) must see it or find their read moved.
      await pg!.handle.db.updateTable("runs").set({ state: "done" }).where("id", "=", fx.runId).execute();
      const inputs = Array.from({ length: 6 }, (_, i) => userMessage(`round ${round} input ${i}`));
      const outcomes = await Promise.all(
        inputs.map((input, i) =>
          (i % 2 ? b : a).ledger.append(
            fx.session.id,
            (ctx) => ({
              facts: [input],
              effects: ctx.activeRun ? [] : [{ kind: "start" as const, runId: newId("run", clock.now()) }],
              echoIds: [input.id],
            }),
            clock.now(),
          ),
        ),
      );
      expect(outcomes.map((o) => o.committed.map((f) => f.id))).toEqual(inputs.map((input) => [input.id]));
      const history = await a.history.readThread(fx.session.threadId, 0);
      expect(history.map((f) => f.seq)).toEqual(history.map((_, i) => i + 1));
      expect(history.filter((f) => f.type === "user.message")).toHaveLength(inputs.length + 1);
      const active = await pg!.handle.db
        .selectFrom("runs")
        .select("id")
        .where("session_id", "=", fx.session.id)
        .where("state", "=", "queued")
        .execute();
      expect(active).toHaveLength(1);
    }
  });
});

describe("PostgreSQL: migrations", () => {
  it("replicas opening a fresh schema at once migrate it exactly once", async () => {
    const schema = freshSchemaName();
    const handles = await Promise.all(
      Array.from({ length: 4 }, () => openPostgres(testDatabaseUrl(), { schema, maxConnections: 2 })),
    );
    try {
      expect(handles.map((h) => h.applied).sort()).toEqual([
        [],
        [],
        [],
        // Every migration this build knows, each applied by exactly one of the four.
        [...KNOWN_MIGRATIONS],
      ]);
      expect(handles.every((h) => h.schema === schema)).toBe(true);
    } finally {
      await Promise.all(handles.map((h) => h.close()));
      await dropSchema(testDatabaseUrl(), schema);
    }
  });
});
