import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import type { DispatchStore, InputContext, InputPlan } from "../../src/coordinator/ports.js";
import { newId } from "../../src/kernel/ids.js";
import {
  callInputAppend,
  inputPlanArgument,
  readForInput,
} from "../../src/stores/postgres/inputAppendCall.js";
import { PostgresDispatchStore } from "../../src/stores/postgres/postgresDispatchStore.js";
import { PostgresInputLedger } from "../../src/stores/postgres/postgresInputLedger.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { planInputWrites } from "../../src/stores/sql/inputWrites.js";
import { SqlDispatchStore } from "../../src/stores/sql/sqlDispatchStore.js";
import { SqlInputLedger } from "../../src/stores/sql/sqlInputLedger.js";
import { openTestPostgres, postgresUnavailable, type TestPostgres } from "../support/postgresFixtures.js";
import { ManualClock, seedQueuedRun, seedSession } from "../support/storeFixtures.js";

/**
 * PostgreSQL runs two write rules in SQL of its own, for the round trips: the claim statement
 * (`awaken_claim_v5`: epoch and crash count, `planClaim`) and migrations 007 and 012's one-call append
 * (`awaken_commit_append_v3`: the step after the fence, `planRunAfterCommit`). Migrations are
 * snapshots, so the function is kept as deployed, and this suite proves it is the same rule: every
 * case runs once through those SQL paths and once through the Kysely path, which executes the
 * TypeScript plans, from the same clock, and the rows they leave must be equal. The input append
 * (migration 015's `awaken_input_append_v1`) is checked the same way below.
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

/**
 * PostgreSQL's input append runs in SQL of its own (migration 015's `awaken_input_append_v1`), for
 * the round trips; the rules stay in `planInputWrites` (facts, projection, session patch, the run
 * effects of `planRunEffects`, the send receipt), whose rows the function executes. Every case runs
 * once through the function and once through the Kysely path that executes the same plans, from
 * the same clock and the same run state, and the rows they leave must be equal.
 */
type RunSetup = "none" | "queued" | "claimed" | "awaiting";
type PlanCase = (ctx: InputContext, ids: (name: string) => string) => InputPlan;

const message = (id: string) => ({
  id,
  type: "user.message",
  body: { content: [{ type: "text", text: "hi" }] },
});
const PLANS: Record<string, { setups: RunSetup[]; plan: PlanCase }> = {
  "message starts a run": {
    setups: ["none"],
    plan: (_ctx, ids) => ({
      facts: [message(ids("m"))],
      effects: [{ kind: "start", runId: ids("run") }],
      echoIds: [ids("m")],
      traceContext: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    }),
  },
  "message behind a running turn": {
    setups: ["queued", "claimed"],
    plan: (_ctx, ids) => ({ facts: [message(ids("m"))], effects: [], echoIds: [ids("m")] }),
  },
  "tool result resumes": {
    setups: ["awaiting", "claimed", "queued"],
    plan: (_ctx, ids) => ({
      facts: [
        { id: ids("r"), type: "user.custom_tool_result", body: { custom_tool_use_id: "x", content: [] } },
      ],
      effects: [{ kind: "resume" }],
      echoIds: [ids("r")],
      traceContext: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    }),
  },
  "interrupt cancels": {
    setups: ["queued", "claimed", "awaiting", "none"],
    plan: (_ctx, ids) => ({
      facts: [{ id: ids("i"), type: "user.interrupt", body: {} }],
      effects: [{ kind: "cancel" }],
      echoIds: [ids("i")],
    }),
  },
  "cancel, then start a new run": {
    setups: ["claimed"],
    plan: (_ctx, ids) => ({
      facts: [message(ids("m"))],
      effects: [{ kind: "cancel" }, { kind: "start", runId: ids("run") }],
      echoIds: [ids("m")],
    }),
  },
  "update patches the session": {
    setups: ["none"],
    plan: (_ctx, ids) => ({
      facts: [{ id: ids("u"), type: "session.updated", body: { title: "t" } }],
      effects: [],
      echoIds: [],
      sessionPatch: { title: "t", metadata: { k: "v" }, budget: null },
    }),
  },
  "archive cancels and stamps": {
    setups: ["claimed", "none"],
    plan: (ctx, ids) => ({
      facts: [{ id: ids("t"), type: "session.status_terminated", body: {} }],
      effects: ctx.activeRun ? [{ kind: "cancel" }] : [],
      echoIds: [],
      sessionPatch: { archivedAt: 1_900_000_000_000 },
    }),
  },
  "a keyed send leaves its receipt": {
    setups: ["none"],
    plan: (_ctx, ids) => ({
      facts: [message(ids("m"))],
      effects: [{ kind: "start", runId: ids("run") }],
      echoIds: [ids("m")],
      requestHash: "a".repeat(64),
      bodyHash: "b".repeat(64),
    }),
  },
  "a patch without facts": {
    setups: ["none"],
    plan: () => ({ facts: [], effects: [], echoIds: [], sessionPatch: { title: null } }),
  },
};
const INPUT_CASES = Object.entries(PLANS).flatMap(([name, c]) =>
  c.setups.map((setup) => ({ name, setup, ...c })),
);

describe.skipIf(postgresUnavailable() !== null)("PostgreSQL's input append function and the plans", () => {
  let pgdb: TestPostgres;
  beforeAll(async () => {
    pgdb = await openTestPostgres();
  });
  afterAll(async () => {
    await pgdb?.dispose();
  });

  it("the one-call input append leaves the rows the plans write", async () => {
    const clock = new ManualClock();
    const stores = postgresCoordinatorStores(pgdb.handle, clock);
    let functionCalls = 0;
    const pool = pgdb.handle.pool;
    const counting = new Proxy(pool, {
      get(target, key, receiver) {
        if (key !== "query") return Reflect.get(target, key, receiver);
        return (config: { text?: string }, ...rest: unknown[]) => {
          if (typeof config === "object" && config.text?.includes("awaken_input_append_v1")) functionCalls++;
          return (target.query as (...a: unknown[]) => unknown).call(target, config, ...rest);
        };
      },
    }) as pg.Pool;
    const viaSql = new PostgresInputLedger(pgdb.handle.db, counting);
    const viaPlans = new SqlInputLedger(pgdb.handle.db, "postgres");
    const db = pgdb.handle.db;

    const runCase = async (
      ledger: SqlInputLedger,
      c: (typeof INPUT_CASES)[number],
      start: number,
      tag: string,
    ) => {
      clock.ms = start;
      const session = await seedSession(stores, clock);
      const ids = (name: string) => `${tag}_${name}`;
      if (c.setup !== "none") {
        await stores.ledger.append(
          session.id,
          () => ({
            facts: [message(ids("seed"))],
            effects: [{ kind: "start", runId: ids("active") }],
            echoIds: [],
          }),
          clock.now(),
        );
        if (c.setup !== "queued") {
          await db
            .updateTable("runs")
            .set({ state: c.setup, owner: "w", epoch: 1, lease_expires_at: start + 60_000 })
            .where("id", "=", ids("active"))
            .execute();
        }
      }
      clock.advance(1);
      const outcome = await ledger.append(session.id, (ctx) => c.plan(ctx, ids), clock.now());
      const runs = await db
        .selectFrom("runs")
        .selectAll()
        .where("session_id", "=", session.id)
        .orderBy("id")
        .execute();
      const sessionRow = await db
        .selectFrom("sessions")
        .select([
          "status",
          "pending_json",
          "usage_json",
          "title",
          "metadata_json",
          "budget_json",
          "archived_at",
          "updated_at",
        ])
        .where("id", "=", session.id)
        .executeTakeFirstOrThrow();
      const events = await db
        .selectFrom("events")
        .select(["seq", "id", "type", "body_json", "created_at"])
        .where("thread_id", "=", session.threadId)
        .orderBy("seq")
        .execute();
      const thread = await db
        .selectFrom("threads")
        .select("version")
        .where("id", "=", session.threadId)
        .executeTakeFirstOrThrow();
      const receipt = await db
        .selectFrom("send_receipts")
        .select(["request_hash", "response_json", "created_at", "body_hash"])
        .where("session_id", "=", session.id)
        .executeTakeFirst();
      // Out of the way of the next cases.
      await db.updateTable("runs").set({ state: "done" }).where("session_id", "=", session.id).execute();
      const rows = {
        outcome: {
          committed: outcome.committed.map((f) => [f.seq, f.id, f.type]),
          activeRunId: outcome.activeRunId,
        },
        runs: runs.map(({ session_id: _s, thread_id: _t, ...run }) => run),
        session: sessionRow,
        events,
        version: Number(thread.version),
        receipt: receipt ?? null,
      };
      return JSON.parse(
        JSON.stringify(rows)
          .replaceAll(session.id, "<session>")
          .replaceAll(session.threadId, "<thread>")
          .replaceAll(`${tag}_`, "<id>_"),
      );
    };

    for (const [i, c] of INPUT_CASES.entries()) {
      const start = 1_800_000_000_000 + i * 100_000;
      const before = functionCalls;
      const sqlRows = await runCase(viaSql, c, start, `sql${i}`);
      expect(functionCalls, `the function ran for ${c.name} (${c.setup})`).toBe(before + 1);
      const planRows = await runCase(viaPlans, c, start, `plan${i}`);
      expect(sqlRows, `${c.name} (${c.setup})`).toEqual(planRows);
    }
  }, 120_000);

  it("writes nothing and answers moved when what the decision read has changed", async () => {
    const clock = new ManualClock();
    const stores = postgresCoordinatorStores(pgdb.handle, clock);
    const db = pgdb.handle.db;
    const pool = pgdb.handle.pool;
    const changes: Record<string, (sessionId: string, threadId: string, runId: string) => Promise<unknown>> =
      {
        "the active run was claimed": (_s, _t, runId) =>
          db
            .updateTable("runs")
            .set({ state: "claimed", epoch: 1, owner: "w" })
            .where("id", "=", runId)
            .execute(),
        "the thread moved": (_s, threadId) =>
          db
            .updateTable("threads")
            .set((eb) => ({ version: eb("version", "+", 1) }))
            .where("id", "=", threadId)
            .execute(),
        "the session row changed": (sessionId) =>
          db
            .updateTable("sessions")
            .set({ credential_pins_json: "[]" })
            .where("id", "=", sessionId)
            .execute(),
      };
    for (const [name, change] of Object.entries(changes)) {
      const session = await seedSession(stores, clock);
      const runId = `run_moved_${name.length}_${clock.now()}`;
      await stores.ledger.append(
        session.id,
        () => ({ facts: [message(`sevt_seed_${runId}`)], effects: [{ kind: "start", runId }], echoIds: [] }),
        clock.now(),
      );
      clock.advance(1);
      const read = (await readForInput(pool, session.id))!;
      const plan: InputPlan = {
        facts: [{ id: `sevt_i_${runId}`, type: "user.interrupt", body: {} }],
        effects: [{ kind: "cancel" }],
        echoIds: [],
      };
      const writes = planInputWrites(
        { sessionId: session.id, threadId: session.threadId, activeRun: read.ctx.activeRun },
        read.row,
        read.version,
        plan,
        clock.now(),
      );
      await change(session.id, session.threadId, runId);
      const before = await db
        .selectFrom("events")
        .select("id")
        .where("thread_id", "=", session.threadId)
        .execute();
      const answer = await callInputAppend(pool, {
        sessionId: session.id,
        threadId: session.threadId,
        seen: read.seen,
        plan: inputPlanArgument(writes, null),
        now: clock.now(),
        channel: null,
      });
      expect(answer, name).toBe("moved");
      const after = await db
        .selectFrom("events")
        .select("id")
        .where("thread_id", "=", session.threadId)
        .execute();
      expect(after, name).toEqual(before);
      const run = await db
        .selectFrom("runs")
        .select("state")
        .where("id", "=", runId)
        .executeTakeFirstOrThrow();
      expect(run.state, name).not.toBe("cancelled");
      // The ledger decides again on a fresh read and appends.
      const outcome = await stores.ledger.append(session.id, () => plan, clock.now());
      expect(
        outcome.committed.map((f) => f.id),
        name,
      ).toEqual([`sevt_i_${runId}`]);
    }
  });

  it("refuses a plan column it does not know instead of dropping it", async () => {
    const clock = new ManualClock();
    const stores = postgresCoordinatorStores(pgdb.handle, clock);
    const session = await seedSession(stores, clock);
    const read = (await readForInput(pgdb.handle.pool, session.id))!;
    const writes = planInputWrites(
      { sessionId: session.id, threadId: session.threadId, activeRun: null },
      read.row,
      read.version,
      { facts: [], effects: [], echoIds: [], sessionPatch: { title: "x" } },
      clock.now(),
    );
    const plan = inputPlanArgument(writes, null) as { session: Record<string, unknown> };
    plan.session.resources_json = "[]";
    await expect(
      callInputAppend(pgdb.handle.pool, {
        sessionId: session.id,
        threadId: session.threadId,
        seen: read.seen,
        plan,
        now: clock.now(),
        channel: null,
      }),
    ).rejects.toThrow(/unknown session column/);
    const row = await pgdb.handle.db
      .selectFrom("sessions")
      .select("title")
      .where("id", "=", session.id)
      .executeTakeFirstOrThrow();
    expect(row.title).toBe(session.title);
  });
});
