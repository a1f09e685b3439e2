import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import type { DispatchStore } from "../../src/coordinator/ports.js";
import { newId } from "../../src/kernel/ids.js";
import { PostgresDispatchStore } from "../../src/stores/postgres/postgresDispatchStore.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { SqlDispatchStore } from "../../src/stores/sql/sqlDispatchStore.js";
import { openTestPostgres, postgresUnavailable, type TestPostgres } from "../support/postgresFixtures.js";
import { ManualClock, seedQueuedRun } from "../support/storeFixtures.js";

/**
 * PostgreSQL runs two write rules in SQL of its own, for the round trips: the claim statement
 * (`awaken_claim_v3`: epoch and crash count, `planClaim`) and migrations 007 and 012's one-call append
 * (`awaken_commit_append_v3`: the step after the fence, `planRunAfterCommit`). Migrations are
 * snapshots, so the function is kept as deployed, and this suite proves it is the same rule: every
 * case runs once through those SQL paths and once through the Kysely path, which executes the
 * TypeScript plans, from the same clock, and the rows they leave must be equal.
 */
const SETTLES = [undefined, "done", "awaiting", "failed"] as const;
const FACTS = {
  none: [],
  bookkeeping: [{ type: "session.status_running", body: {} }],
  progress: [{ type: "agent.message", body: { content: [{ type: "text", text: "x" }] } }],
  pending: [{ type: "agent.custom_tool_use", body: { name: "lookup", input: {} } }],
} as const;
const CASES = SETTLES.flatMap((settle) =>
  (Object.keys(FACTS) as (keyof typeof FACTS)[]).flatMap((facts) =>
    [false, true].map((crashed) => ({ settle, facts, crashed })),
  ),
);

describe.skipIf(postgresUnavailable() !== null)("PostgreSQL's SQL write rules and the plans", () => {
  let pgdb: TestPostgres;
  beforeAll(async () => {
    pgdb = await openTestPostgres();
  });
  afterAll(async () => {
    await pgdb?.dispose();
  });

  it("the claim statement and the one-call append leave the rows the plans write", async () => {
    const clock = new ManualClock();
    const stores = postgresCoordinatorStores(pgdb.handle, clock);
    let functionCalls = 0;
    const pool = pgdb.handle.pool;
    const counting = new Proxy(pool, {
      get(target, key, receiver) {
        if (key !== "query") return Reflect.get(target, key, receiver);
        return (config: { text?: string }, ...rest: unknown[]) => {
          if (typeof config === "object" && config.text?.includes("awaken_commit_append_v3")) functionCalls++;
          return (target.query as (...a: unknown[]) => unknown).call(target, config, ...rest);
        };
      },
    }) as pg.Pool;
    const viaSql = new PostgresDispatchStore(pgdb.handle.db, counting, clock);
    const viaPlans = new SqlDispatchStore(pgdb.handle.db, clock, "postgres");

    const runCase = async (dispatch: DispatchStore, c: (typeof CASES)[number], start: number) => {
      clock.ms = start;
      const fx = await seedQueuedRun(stores, clock);
      clock.advance(1);
      let claim = (await dispatch.claim("w1", 1_000))!;
      expect(claim.runId).toBe(fx.runId);
      if (c.crashed) {
        clock.advance(1_001);
        claim = (await dispatch.claim("w2", 1_000))!;
      }
      const claimed = { epoch: claim.epoch, crashCount: claim.crashCount };
      clock.advance(1);
      const operation: CommitOperation = {
        opId: `op_${fx.runId}`,
        runId: fx.runId,
        threadId: fx.session.threadId,
        owner: claim.owner,
        epoch: claim.epoch,
        expectedVersion: claim.history.length,
        facts: FACTS[c.facts].map((f) => ({
          id: newId("sevt", clock.now()),
          type: f.type,
          body: { ...f.body },
        })),
        ...(c.settle ? { settle: c.settle } : {}),
      };
      const result = await dispatch.commit(operation);
      expect(result.ok).toBe(true);
      const run = await pgdb.handle.db
        .selectFrom("runs")
        .select(["state", "owner", "epoch", "lease_expires_at", "available_at", "crash_count", "updated_at"])
        .where("id", "=", fx.runId)
        .executeTakeFirstOrThrow();
      const session = await pgdb.handle.db
        .selectFrom("sessions")
        .select(["status", "pending_json", "usage_json", "updated_at"])
        .where("id", "=", fx.session.id)
        .executeTakeFirstOrThrow();
      // Out of the way of the next case's claims.
      await pgdb.handle.db.updateTable("runs").set({ state: "done" }).where("id", "=", fx.runId).execute();
      const pending = JSON.parse(session.pending_json).length;
      return {
        claimed,
        receipt: result.ok
          ? { versionAfter: result.receipt.versionAfter, settled: result.receipt.settled }
          : null,
        run: { ...run, epoch: Number(run.epoch), crash_count: Number(run.crash_count) },
        session: {
          status: session.status,
          pending,
          usage: session.usage_json,
          updatedAt: session.updated_at,
        },
      };
    };

    for (const [i, c] of CASES.entries()) {
      const start = 1_800_000_000_000 + i * 100_000;
      const before = functionCalls;
      const sqlRows = await runCase(viaSql, c, start);
      expect(functionCalls, `the one-call append ran for ${JSON.stringify(c)}`).toBe(before + 1);
      const planRows = await runCase(viaPlans, c, start);
      expect(sqlRows, JSON.stringify(c)).toEqual(planRows);
    }
  }, 120_000);
});
