import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DomainInput, SendDedupe } from "../../src/coordinator/domainInputs.js";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import type { CoordinatorStores, SessionRecord } from "../../src/coordinator/ports.js";
import { SessionService } from "../../src/coordinator/sessionService.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { newId } from "../../src/kernel/ids.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import type { Db } from "../../src/stores/sql/db.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../../src/stores/sqlite/sqliteStores.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";
import { ManualClock, seedSession } from "../support/storeFixtures.js";

/**
 * The input ledger's conformance suite: what an input does to the session's runs, on both
 * executors of the write plans (stores/sql/inputWrites.ts, runWrites.ts, commitWrites.ts):
 * SQLite's synchronous transaction on a database file, PostgreSQL's one statement on its own schema.
 */
interface Opened {
  stores: CoordinatorStores;
  db: Db;
  close(): Promise<void>;
}

const BACKENDS = {
  "SQLite synchronous ledger (file)": (clock: ManualClock) =>
    sqliteFile((h) => sqliteCoordinatorStores(h, clock)),
  "PostgreSQL ledger": async (clock: ManualClock): Promise<Opened> => {
    const pg = await openTestPostgres();
    return {
      stores: postgresCoordinatorStores(pg.handle, clock),
      db: pg.handle.db,
      close: () => pg.dispose(),
    };
  },
} as const;
type Backend = keyof typeof BACKENDS;

async function sqliteFile(
  stores: (handle: Awaited<ReturnType<typeof openSqlite>>) => CoordinatorStores,
): Promise<Opened> {
  const dir = mkdtempSync(join(tmpdir(), "awaken-ledger-"));
  const handle = await openSqlite(join(dir, "awaken.db"));
  return {
    stores: stores(handle),
    db: handle.db,
    close: async () => {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Fixture {
  opened: Opened;
  clock: ManualClock;
  session: SessionRecord;
  service: SessionService;
  send(inputs: DomainInput[], dedupe?: SendDedupe): ReturnType<SessionService["send"]>;
  runs(): Promise<{ id: string; state: string; epoch: number; owner: string | null; crash_count: number }[]>;
  version(): Promise<number>;
  /** Commits `facts` (stored types and bodies) under `claim`, settling the run as `settle`. */
  commit(
    claim: { runId: string; owner: string; epoch: number },
    facts: { type: string; body: Record<string, unknown>; id?: string }[],
    settle?: "done" | "awaiting" | "failed",
  ): ReturnType<CoordinatorStores["dispatch"]["commit"]>;
}

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.opened.close();
  fx = undefined;
});

async function open(backend: Backend): Promise<Fixture> {
  const clock = new ManualClock();
  const opened = await BACKENDS[backend](clock);
  const session = await seedSession(opened.stores, clock);
  const ports = {
    ...opened.stores,
    signals: new InProcessWakeSignals(),
    evidence: new InProcessLiveEvidenceBus(),
  };
  const service = new SessionService(ports, clock);
  let ops = 0;
  const f: Fixture = {
    opened,
    clock,
    session,
    service,
    send: (inputs, dedupe) => service.send(session.workspaceId, session.id, inputs, { dedupe }),
    runs: async () =>
      (
        await opened.db
          .selectFrom("runs")
          .select(["id", "state", "epoch", "owner", "crash_count"])
          .where("session_id", "=", session.id)
          .orderBy("created_at")
          .execute()
      ).map((r) => ({ ...r, epoch: Number(r.epoch), crash_count: Number(r.crash_count) })),
    version: () => opened.stores.history.threadVersion(session.threadId),
    commit: async (claim, facts, settle) => {
      const version = await f.version();
      return opened.stores.dispatch.commit({
        opId: `op_${++ops}`,
        runId: claim.runId,
        threadId: session.threadId,
        owner: claim.owner,
        epoch: claim.epoch,
        expectedVersion: version,
        facts: facts.map((fact) => ({
          id: fact.id ?? newId("sevt", clock.now()),
          type: fact.type,
          body: fact.body,
        })),
        ...(settle ? { settle } : {}),
      } as Parameters<CoordinatorStores["dispatch"]["commit"]>[0]);
    },
  };
  return f;
}

const text = (t: string) => [{ type: "text" as const, text: t }];
const message = (t: string): DomainInput => ({ kind: "message", content: text(t) });
const ANSWER = { type: "agent.message", body: { content: text("answer") } };

/** A run parked on a custom tool call: returns the claim and the call's id. */
async function parkOnCustomTool(f: Fixture) {
  await f.send([message("go")]);
  const claim = (await f.opened.stores.dispatch.claim("w1", 10_000))!;
  const callId = newId("sevt", f.clock.now());
  const parked = await f.commit(
    claim,
    [{ id: callId, type: "agent.custom_tool_use", body: { name: "lookup", input: {} } }],
    "awaiting",
  );
  expect(parked.ok).toBe(true);
  return { claim, callId };
}

describe.each(Object.keys(BACKENDS) as Backend[])("the input ledger: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backend.includes("PostgreSQL") ? postgresUnavailable() : null;
    if (reason) ctx.skip(reason);
  });

  it("a message to an idle session starts one queued run and reports it running", async () => {
    fx = await open(backend);
    const echo = await fx.send([message("hi")]);
    expect(echo.map((f) => f.type)).toEqual(["user.message"]);
    const history = await fx.opened.stores.history.readThread(fx.session.threadId, 0);
    expect(history.map((f) => f.type)).toEqual(["user.message", "session.status_running"]);
    expect(history.map((f) => f.seq)).toEqual([1, 2]);
    expect(await fx.runs()).toMatchObject([{ state: "queued", epoch: 0, owner: null, crash_count: 0 }]);
    const stored = await fx.opened.stores.sessions.get(fx.session.workspaceId, fx.session.id);
    expect(stored?.status).toBe("running");
  });

  it("a send naming another workspace's session is not found and writes nothing, keyed or not", async () => {
    fx = await open(backend);
    const f = fx;
    const key = { key: "k1", windowMs: 60_000, strict: true };
    await f.send([message("mine")], key);
    const before = await f.version();
    const foreign = (dedupe?: SendDedupe) =>
      f.service.send("wrkspc_other", f.session.id, [message("theirs")], { dedupe });
    // Unkeyed: refused inside the append; keyed with the owner's key: its echo is not handed out.
    await expect(foreign()).rejects.toMatchObject({ code: "not_found" });
    await expect(foreign(key)).rejects.toMatchObject({ code: "not_found" });
    expect(await f.version()).toBe(before);
    expect(await f.runs()).toHaveLength(1);
  });

  it("a message while a run works is queued input: appended, no second run, the claim untouched", async () => {
    fx = await open(backend);
    await fx.send([message("first")]);
    const claim = (await fx.opened.stores.dispatch.claim("w1", 10_000))!;
    const echo = await fx.send([message("second")]);
    expect(echo.map((f) => f.type)).toEqual(["user.message"]);
    expect(await fx.runs()).toMatchObject([{ id: claim.runId, state: "claimed", epoch: 1, owner: "w1" }]);
    expect(await fx.opened.stores.dispatch.claim("w2", 10_000)).toBeNull();
    // The running claim still commits (after the queued input, at the version it now reads).
    expect((await fx.commit(claim, [ANSWER])).ok).toBe(true);
  });

  it("a custom tool result resumes the parked run: queued again, same run, the pending call answered", async () => {
    fx = await open(backend);
    const { claim, callId } = await parkOnCustomTool(fx);
    expect(await fx.runs()).toMatchObject([{ id: claim.runId, state: "awaiting" }]);
    await fx.send([{ kind: "tool_result", callId, content: text("42"), isError: false }]);
    expect(await fx.runs()).toMatchObject([{ id: claim.runId, state: "queued", epoch: 1 }]);
    const stored = await fx.opened.stores.sessions.get(fx.session.workspaceId, fx.session.id);
    expect(stored?.pending).toEqual([]);
    const next = (await fx.opened.stores.dispatch.claim("w2", 10_000))!;
    expect(next).toMatchObject({ runId: claim.runId, epoch: 2, crashCount: 0 });
  });

  it("a confirmation resumes a run parked on it; a denial is answered by the server", async () => {
    fx = await open(backend);
    await fx.send([message("go")]);
    const claim = (await fx.opened.stores.dispatch.claim("w1", 10_000))!;
    const callId = newId("sevt", fx.clock.now());
    const asked = await fx.commit(
      claim,
      [
        {
          id: callId,
          type: "agent.tool_use",
          body: { name: "bash", input: {}, evaluated_permission: "ask", evaluation: null },
        },
        {
          type: "awaken.tool_awaits",
          body: { tool_use_id: callId, answer: "tool_confirmation", after_allow: "server" },
        },
      ],
      "awaiting",
    );
    expect(asked.ok).toBe(true);
    expect(await fx.runs()).toMatchObject([{ state: "awaiting" }]);
    const echo = await fx.send([{ kind: "tool_confirmation", callId, allowed: false, denyMessage: "no" }]);
    expect(echo.map((f) => f.type)).toEqual(["user.tool_confirmation"]);
    expect(await fx.runs()).toMatchObject([{ id: claim.runId, state: "queued" }]);
    const history = await fx.opened.stores.history.readThread(fx.session.threadId, 0);
    expect(history.slice(-3).map((f) => f.type)).toEqual([
      "user.tool_confirmation",
      "agent.tool_result",
      "session.status_running",
    ]);
  });

  it("an interrupt cancels the working run and fences its owner off", async () => {
    fx = await open(backend);
    await fx.send([message("go")]);
    const claim = (await fx.opened.stores.dispatch.claim("w1", 10_000))!;
    await fx.send([{ kind: "interrupt" }]);
    expect(await fx.runs()).toMatchObject([{ state: "cancelled", epoch: 2, owner: null }]);
    expect(await fx.commit(claim, [ANSWER])).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    expect(await fx.opened.stores.dispatch.claim("w2", 10_000)).toBeNull();
    // The next message starts a new run.
    await fx.send([message("again")]);
    const runs = await fx.runs();
    expect(runs.map((r) => r.state)).toEqual(["cancelled", "queued"]);
  });

  it("an interrupt only while working does nothing to a parked run; it still resumes on its answer", async () => {
    fx = await open(backend);
    const { claim, callId } = await parkOnCustomTool(fx);
    const version = await fx.version();
    const echo = await fx.send([{ kind: "interrupt", onlyWhileWorking: true }]);
    expect(echo).toEqual([]);
    expect(await fx.version()).toBe(version);
    expect(await fx.runs()).toMatchObject([{ id: claim.runId, state: "awaiting", epoch: 1 }]);
    await fx.send([{ kind: "tool_result", callId, content: text("ok"), isError: false }]);
    expect(await fx.runs()).toMatchObject([{ id: claim.runId, state: "queued" }]);
  });

  it("a deduplicated send returns the original echo; strict refuses another body; the window ends", async () => {
    fx = await open(backend);
    const dedupe: SendDedupe = { key: "k1", strict: true, windowMs: 60_000 };
    const first = await fx.send([message("once")], dedupe);
    const version = await fx.version();
    fx.clock.advance(1_000);
    expect(await fx.send([message("once")], dedupe)).toEqual(first);
    expect(await fx.version()).toBe(version);
    expect(await fx.runs()).toHaveLength(1);
    const reused = await fx.send([message("other")], dedupe).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(AwakenError);
    expect((reused as AwakenError).code).toBe("idempotency_key_reused");
    // Not strict: a repeat within the window is answered from the receipt whatever its body.
    const loose: SendDedupe = { key: "k1", strict: false, windowMs: 60_000 };
    expect(await fx.send([message("other")], loose)).toEqual(first);
    // Past the window, the same key is a new send.
    fx.clock.advance(60_000);
    const later = await fx.send([message("once")], dedupe);
    expect(later[0]?.id).not.toBe(first[0]?.id);
    expect(await fx.version()).toBe(version + 1);
  });

  it("a session update patches the row and records what changed, in one append", async () => {
    fx = await open(backend);
    await fx.send([message("hi")]);
    fx.clock.advance(5);
    await fx.service.update(fx.session.workspaceId, fx.session.id, { title: "named", metadata: { a: "1" } });
    const stored = await fx.opened.stores.sessions.get(fx.session.workspaceId, fx.session.id);
    expect(stored).toMatchObject({ title: "named", metadata: { a: "1" }, status: "running" });
    expect(stored?.updatedAt).toBe(fx.clock.now());
    const history = await fx.opened.stores.history.readThread(fx.session.threadId, 0);
    expect(history.at(-1)?.type).toBe("session.updated");
  });

  it("after the fence: a run settling as awaiting with nothing pending stays queued", async () => {
    fx = await open(backend);
    await fx.send([message("go")]);
    const claim = (await fx.opened.stores.dispatch.claim("w1", 10_000))!;
    expect((await fx.commit(claim, [ANSWER], "awaiting")).ok).toBe(true);
    expect(await fx.runs()).toMatchObject([{ state: "queued", owner: null, crash_count: 0 }]);
    expect(await fx.opened.stores.dispatch.claim("w2", 10_000)).toMatchObject({ runId: claim.runId });
  });

  it("the claim counts lapses; progress resets the budget, bookkeeping does not", async () => {
    fx = await open(backend);
    const f = fx;
    await f.send([message("go")]);
    const lapse = async (owner: string) => {
      f.clock.advance(10_001);
      return (await f.opened.stores.dispatch.claim(owner, 10_000))!;
    };
    await f.opened.stores.dispatch.claim("w1", 10_000);
    const second = await lapse("w2");
    expect(second).toMatchObject({ epoch: 2, crashCount: 1 });
    expect((await f.commit(second, [{ type: "session.status_running", body: {} }])).ok).toBe(true);
    expect(await f.runs()).toMatchObject([{ crash_count: 1 }]);
    const third = await lapse("w3");
    expect(third).toMatchObject({ epoch: 3, crashCount: 2 });
    expect((await f.commit(third, [ANSWER])).ok).toBe(true);
    expect(await f.runs()).toMatchObject([{ crash_count: 0, state: "claimed", owner: "w3" }]);
    expect(await lapse("w4")).toMatchObject({ epoch: 4, crashCount: 1 });
  });
});
