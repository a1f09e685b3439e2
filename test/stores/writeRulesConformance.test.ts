import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import type { CoordinatorStores, InputContext, InputPlan } from "../../src/coordinator/ports.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import type { Db } from "../../src/stores/sql/db.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../../src/stores/sqlite/sqliteStores.js";
import { openTestPostgres, postgresUnavailable, type TestPostgres } from "../support/postgresFixtures.js";
import { ManualClock, seedSession } from "../support/storeFixtures.js";

/**
 * Each write rule is planned once (stores/sql/runWrites.ts, commitWrites.ts, inputWrites.ts) and
 * executed once per backend: SQLite's synchronous transactions and PostgreSQL's one statement per
 * claim, commit and input. This suite runs every case through both executors from the same clock
 * and the same ids, and the rows they leave (runs, commits, operations, the session row) must be
 * equal: one rule, two executors, one result.
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

interface Executor {
  stores: CoordinatorStores;
  db: Db;
  close(): Promise<void>;
}

const EXECUTORS: Record<string, () => Promise<Executor>> = {
  SQLite: async () => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-conformance-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    const clock = CLOCK;
    return {
      stores: sqliteCoordinatorStores(handle, clock),
      db: handle.db,
      close: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  PostgreSQL: async () => {
    const pg: TestPostgres = await openTestPostgres();
    return {
      stores: postgresCoordinatorStores(pg.handle, CLOCK),
      db: pg.handle.db,
      close: () => pg.dispose(),
    };
  },
};

/** One clock for both executors: each case sets it before it runs on either. */
const CLOCK = new ManualClock();

/** The rows a session's writes left, with bigints as numbers and the session's ids as aliases. */
async function rowsOf(db: Db, sessionId: string, threadId: string, aliases: Record<string, string>) {
  const runs = await db
    .selectFrom("runs")
    .selectAll()
    .where("session_id", "=", sessionId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  const commits = await db
    .selectFrom("commits")
    .selectAll()
    .where("thread_id", "=", threadId)
    .orderBy("base_version")
    .execute();
  const operations = await db
    .selectFrom("commit_operations")
    .selectAll()
    .where("run_id", "in", runs.length > 0 ? runs.map((r) => r.id) : [""])
    .orderBy("op_id")
    .execute();
  const session = await db
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
    .where("id", "=", sessionId)
    .executeTakeFirstOrThrow();
  let text = JSON.stringify({ runs, commits, operations, session }, (_key, value) =>
    typeof value === "string" && /^-?\d+$/.test(value) && value.length < 17 ? Number(value) : value,
  );
  for (const [id, alias] of Object.entries(aliases)) text = text.replaceAll(id, alias);
  return JSON.parse(text) as unknown;
}

const PG = postgresUnavailable() === null;

describe.skipIf(!PG)("one write rule, two executors: SQLite and PostgreSQL write the same rows", () => {
  const opened: Record<string, Executor> = {};
  beforeAll(async () => {
    for (const [name, open] of Object.entries(EXECUTORS)) opened[name] = await open();
  });
  afterAll(async () => {
    for (const executor of Object.values(opened)) await executor.close();
  });

  it("claims and fenced commits: every settle, every kind of facts, with and without a lapsed claim", async () => {
    const runCase = async (executor: Executor, c: (typeof CASES)[number], start: number, tag: string) => {
      const { stores, db } = executor;
      CLOCK.ms = start;
      const session = await seedSession(stores, CLOCK, { id: `sesn_${tag}`, threadId: `sthr_${tag}` });
      const runId = `run_${tag}`;
      await stores.ledger.append(
        session.id,
        () => ({
          facts: [
            { id: `sevt_${tag}_m`, type: "user.message", body: { content: [{ type: "text", text: "hi" }] } },
          ],
          effects: [{ kind: "start", runId }],
          echoIds: [],
        }),
        CLOCK.now(),
      );
      CLOCK.advance(1);
      let claim = (await stores.dispatch.claim("w1", 1_000))!;
      expect(claim.runId).toBe(runId);
      if (c.crashed) {
        CLOCK.advance(1_001);
        claim = (await stores.dispatch.claim("w2", 1_000))!;
      }
      CLOCK.advance(1);
      const operation: CommitOperation = {
        opId: `op_${tag}`,
        runId,
        threadId: session.threadId,
        owner: claim.owner,
        epoch: claim.epoch,
        expectedVersion: claim.history.length,
        facts: FACTS[c.facts].map((f, i) => ({ id: `sevt_${tag}_${i}`, type: f.type, body: { ...f.body } })),
        ...(c.settle ? { settle: c.settle } : {}),
      };
      const result = await stores.dispatch.commit(operation);
      expect(result.ok, JSON.stringify(c)).toBe(true);
      // A retry of the same operation is its duplicate, on both.
      const retry = await stores.dispatch.commit(operation);
      expect(retry).toMatchObject({ ok: true, duplicate: true });
      const rows = await rowsOf(db, session.id, session.threadId, {
        [tag]: "<tag>",
        [session.environmentId]: "<env>",
      });
      // Out of the way of the next case's claims.
      await db.updateTable("runs").set({ state: "done" }).where("id", "=", runId).execute();
      return { claim: { epoch: claim.epoch, crashCount: claim.crashCount }, result, rows };
    };
    for (const [i, c] of CASES.entries()) {
      const start = 1_800_000_000_000 + i * 100_000;
      const sqlite = await runCase(opened.SQLite!, c, start, `c${i}`);
      const postgres = await runCase(opened.PostgreSQL!, c, start, `c${i}`);
      expect(postgres, JSON.stringify(c)).toEqual(sqlite);
    }
  }, 120_000);

  it("input appends: every kind of input on every state of the session's run", async () => {
    const runCase = async (
      executor: Executor,
      c: (typeof INPUT_CASES)[number],
      start: number,
      tag: string,
    ) => {
      const { stores, db } = executor;
      CLOCK.ms = start;
      const session = await seedSession(stores, CLOCK, { id: `sesn_${tag}`, threadId: `sthr_${tag}` });
      const ids = (name: string) => `${tag}_${name}`;
      if (c.setup !== "none") {
        await stores.ledger.append(
          session.id,
          () => ({
            facts: [message(ids("seed"))],
            effects: [{ kind: "start", runId: ids("active") }],
            echoIds: [],
          }),
          CLOCK.now(),
        );
        if (c.setup !== "queued") {
          await db
            .updateTable("runs")
            .set({ state: c.setup, owner: "w", epoch: 1, lease_expires_at: start + 60_000 })
            .where("id", "=", ids("active"))
            .execute();
        }
      }
      CLOCK.advance(1);
      const outcome = await stores.ledger.append(session.id, (ctx) => c.plan(ctx, ids), CLOCK.now());
      const rows = await rowsOf(db, session.id, session.threadId, {
        [tag]: "<tag>",
        [session.environmentId]: "<env>",
      });
      const replay = await stores.ledger.lastSend(session.id, "a".repeat(64), 0);
      await db.updateTable("runs").set({ state: "done" }).where("session_id", "=", session.id).execute();
      return {
        outcome: {
          committed: outcome.committed.map((f) => [f.seq, f.id, f.type]),
          activeRunId: outcome.activeRunId,
        },
        replay: replay && { echo: replay.echo.map((f) => [f.seq, f.id]), bodyHash: replay.bodyHash },
        rows: JSON.parse(JSON.stringify(rows).replaceAll(tag, "<tag>")),
      };
    };
    for (const [i, c] of INPUT_CASES.entries()) {
      const start = 1_800_000_000_000 + i * 100_000;
      const sqlite = await runCase(opened.SQLite!, c, start, `i${i}`);
      const postgres = await runCase(opened.PostgreSQL!, c, start, `i${i}`);
      expect(postgres, `${c.name} (${c.setup})`).toEqual(sqlite);
    }
  }, 120_000);
});

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
