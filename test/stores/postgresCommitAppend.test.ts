import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import type { CoordinatorStores } from "../../src/coordinator/ports.js";
import { newId } from "../../src/kernel/ids.js";
import type { JsonObject } from "../../src/kernel/json.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { openTestPostgres, postgresUnavailable, type TestPostgres } from "../support/postgresFixtures.js";
import { ManualClock, op, seedQueuedRun } from "../support/storeFixtures.js";

// The plain append in one round trip (migration 005, `PostgresDispatchStore.appendInOneCall`): which
// statements reach the server, and that the one-call path writes exactly what the locked path
// writes, including when another writer moved the session projection in between.
const LEASE_MS = 60_000;

let pgFixture: TestPostgres | undefined;
let a: CoordinatorStores;
let b: CoordinatorStores;
let clock: ManualClock;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  clock = new ManualClock();
  pgFixture = await openTestPostgres();
  a = postgresCoordinatorStores(pgFixture.handle, clock);
  b = postgresCoordinatorStores(await pgFixture.openReplica(), clock);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await pgFixture?.dispose();
  pgFixture = undefined;
});

/** The statements `fn` sends to PostgreSQL, in order (BEGIN and COMMIT included). */
async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const texts: string[] = [];
  const original = pg.Client.prototype.query;
  vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === "string" ? first : (first as { text?: string }).text;
    texts.push((text ?? "").trim().split(/\s+/).slice(0, 3).join(" "));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original);
  try {
    await fn();
  } finally {
    vi.restoreAllMocks();
  }
  return texts;
}

async function sessionColumns(sessionId: string) {
  const { rows } = await pgFixture!.handle.pool.query(
    "select status, pending_json, usage_json from sessions where id = $1",
    [sessionId],
  );
  return rows[0] as { status: string; pending_json: string; usage_json: string };
}

function withUsage(operation: CommitOperation, inputTokens: number): CommitOperation {
  return {
    ...operation,
    facts: [
      ...operation.facts,
      {
        id: newId("sevt", clock.now()),
        type: "span.model_request_end",
        body: { model_usage: { input_tokens: inputTokens, output_tokens: 1 } },
      },
    ],
  };
}

describe("PostgreSQL: the plain append in one call", () => {
  it("after a claim, an append is one statement; a replica that saw nothing takes the locked path", async () => {
    const fx = await seedQueuedRun(a, clock);
    const claim = (await a.dispatch.claim("w1", LEASE_MS))!;
    const v0 = await a.history.threadVersion(fx.session.threadId);

    const oneCall = await statementsOf(() => a.dispatch.commit(op(fx, claim, v0, 2)));
    expect(oneCall).toEqual(["select o_index, o_outcome,"]);

    // Replica b never claimed or committed on this thread: it cannot know the projection.
    const locked = await statementsOf(async () => {
      expect(await b.dispatch.commit(op(fx, claim, v0 + 2, 2))).toMatchObject({ ok: true, duplicate: false });
    });
    expect(locked[0]).toBe("start transaction isolation");
    expect(locked).toContain("commit");
    expect(locked.some((t) => t.startsWith("select o_index"))).toBe(false);

    const facts = await a.history.readThread(fx.session.threadId, v0);
    expect(facts.map((f) => f.seq)).toEqual([v0 + 1, v0 + 2, v0 + 3, v0 + 4]);
  });

  it("a claim's bookkeeping keeps the crash count on both paths; a fact of the conversation resets it", async () => {
    const fx = await seedQueuedRun(a, clock);
    await a.dispatch.claim("w0", LEASE_MS);
    const spans = (types: string[]) =>
      types.map((type) => ({
        id: newId("sevt", clock.now()),
        type,
        body: (type === "agent.message" ? { content: [{ type: "text", text: "answer" }] } : {}) as JsonObject,
      }));
    /** After a lapse, claims on `a` and commits `types` through `via`; returns the statements sent. */
    const crashThenCommit = async (owner: string, via: CoordinatorStores, types: string[]) => {
      clock.advance(LEASE_MS + 1);
      const claim = (await a.dispatch.claim(owner, LEASE_MS))!;
      const version = await a.history.threadVersion(fx.session.threadId);
      const sent = await statementsOf(async () => {
        const result = await via.dispatch.commit({ ...op(fx, claim, version, 0), facts: spans(types) });
        expect(result).toMatchObject({ ok: true });
      });
      return { crashCount: claim.crashCount, oneCall: sent.some((t) => t.startsWith("select o_index")) };
    };
    // The function (a remembers the projection its claim left) and the locked path (b never saw
    // this thread, and a locked commit teaches it nothing the next claim on a would not change).
    expect(await crashThenCommit("w1", a, ["session.status_running", "span.model_request_start"])).toEqual({
      crashCount: 1,
      oneCall: true,
    });
    expect(await crashThenCommit("w2", b, ["span.model_request_end", "session.error"])).toEqual({
      crashCount: 2,
      oneCall: false,
    });
    expect(await crashThenCommit("w3", a, ["span.model_request_start"])).toEqual({
      crashCount: 3,
      oneCall: true,
    });
    expect(await crashThenCommit("w4", b, ["span.model_request_end", "agent.message"])).toMatchObject({
      crashCount: 4,
    });
    clock.advance(LEASE_MS + 1);
    expect((await a.dispatch.claim("w5", LEASE_MS))!.crashCount).toBe(1);
  });

  it("a projection moved by another replica is read back and the append retried once, with the right totals", async () => {
    const fx = await seedQueuedRun(a, clock);
    const claim = (await a.dispatch.claim("w1", LEASE_MS))!;
    let version = await a.history.threadVersion(fx.session.threadId);

    expect(await a.dispatch.commit(withUsage(op(fx, claim, version, 1), 10))).toMatchObject({ ok: true });
    version += 2;
    // The same worker's next commit lands through replica b (remote workers talk to any replica).
    expect(await b.dispatch.commit(withUsage(op(fx, claim, version, 1), 100))).toMatchObject({ ok: true });
    version += 2;

    // a remembers the projection with 10 input tokens; the row now has 110.
    const sent = await statementsOf(async () => {
      const result = await a.dispatch.commit(withUsage(op(fx, claim, version, 1, "done"), 1000));
      expect(result).toMatchObject({ ok: true, duplicate: false, receipt: { versionAfter: version + 2 } });
    });
    expect(sent).toEqual(["select o_index, o_outcome,", "select o_index, o_outcome,"]);

    const columns = await sessionColumns(fx.session.id);
    expect(JSON.parse(columns.usage_json)).toMatchObject({ input_tokens: 1110, output_tokens: 3 });
    const { rows } = await pgFixture!.handle.pool.query("select state, owner from runs where id = $1", [
      fx.runId,
    ]);
    expect(rows[0]).toEqual({ state: "done", owner: null });
  });

  it("appends made together on many threads share one call; one that does not qualify is decided alone", async () => {
    const fixtures = [];
    for (let i = 0; i < 6; i++) {
      const fx = await seedQueuedRun(a, clock);
      fixtures.push(fx);
    }
    const claims = new Map<string, { owner: string; epoch: number }>();
    for (let i = 0; i < fixtures.length; i++) {
      const claim = (await a.dispatch.claim(`w${i}`, LEASE_MS))!;
      claims.set(claim.runId, claim);
    }
    const versions = await Promise.all(fixtures.map((fx) => a.history.threadVersion(fx.session.threadId)));
    const operations = fixtures.map((fx, i) => {
      const claim = claims.get(fx.runId)!;
      // The last one holds a stale epoch: the function skips it, the locked path rejects it.
      return op(
        fx,
        i === fixtures.length - 1 ? { ...claim, epoch: claim.epoch - 1 } : claim,
        versions[i]!,
        2,
      );
    });
    let results: Awaited<ReturnType<typeof a.dispatch.commit>>[] = [];
    const sent = await statementsOf(async () => {
      results = await Promise.all(operations.map((operation) => a.dispatch.commit(operation)));
    });
    expect(sent.filter((t) => t.startsWith("select o_index"))).toHaveLength(1);
    expect(results.slice(0, -1).every((r) => r.ok && !r.duplicate)).toBe(true);
    expect(results.at(-1)).toMatchObject({ ok: false, rejection: { kind: "stale_claim" } });
    for (const [i, fx] of fixtures.entries()) {
      const expected = i === fixtures.length - 1 ? versions[i]! : versions[i]! + 2;
      expect(await a.history.threadVersion(fx.session.threadId)).toBe(expected);
    }
  });

  it("every refusal of the function writes nothing and is decided by the locked path", async () => {
    const fx = await seedQueuedRun(a, clock);
    const claim = (await a.dispatch.claim("w1", LEASE_MS))!;
    const version = await a.history.threadVersion(fx.session.threadId);
    const first = op(fx, claim, version, 2);
    expect(await a.dispatch.commit(first)).toMatchObject({ ok: true, duplicate: false });

    // A retry of the same operation: the original receipt, nothing appended.
    const retry = await a.dispatch.commit(first);
    expect(retry).toMatchObject({ ok: true, duplicate: true });
    // A stale version, a stale epoch, a lapsed lease: rejected, nothing appended.
    expect(await a.dispatch.commit(op(fx, claim, version, 1, undefined, 1))).toMatchObject({
      ok: false,
      rejection: { kind: "version_conflict", currentVersion: version + 2 },
    });
    expect(
      await a.dispatch.commit(op(fx, { ...claim, epoch: claim.epoch + 1 }, version + 2, 1)),
    ).toMatchObject({
      ok: false,
      rejection: { kind: "stale_claim" },
    });
    clock.advance(LEASE_MS);
    expect(await a.dispatch.commit(op(fx, claim, version + 2, 1))).toMatchObject({
      ok: false,
      rejection: { kind: "stale_claim", reason: "lease expired" },
    });
    expect(await a.history.threadVersion(fx.session.threadId)).toBe(version + 2);
  });
});

describe("PostgreSQL: batches of appends", () => {
  async function claimedFixtures(count: number) {
    const fixtures = [];
    for (let i = 0; i < count; i++) fixtures.push(await seedQueuedRun(a, clock));
    const claims = new Map<string, { owner: string; epoch: number }>();
    for (let i = 0; i < count; i++) {
      const claim = (await a.dispatch.claim(`w${i}`, LEASE_MS))!;
      claims.set(claim.runId, claim);
    }
    const versions = await Promise.all(fixtures.map((fx) => a.history.threadVersion(fx.session.threadId)));
    return fixtures.map((fx, i) => ({ fx, claim: claims.get(fx.runId)!, version: versions[i]! }));
  }

  it("eight appends made together travel as two calls of four, and all land", async () => {
    const claimed = await claimedFixtures(8);
    let results: Awaited<ReturnType<typeof a.dispatch.commit>>[] = [];
    const sent = await statementsOf(async () => {
      results = await Promise.all(
        claimed.map(({ fx, claim, version }) => a.dispatch.commit(op(fx, claim, version, 2))),
      );
    });
    expect(sent).toEqual(["select o_index, o_outcome,", "select o_index, o_outcome,"]);
    expect(results.every((r) => r.ok && !r.duplicate)).toBe(true);
    for (const { fx, version } of claimed) {
      expect(await a.history.threadVersion(fx.session.threadId)).toBe(version + 2);
    }
  });

  it("two appends of one thread in one batch: the first lands, the second is decided on the locked path", async () => {
    const [only] = await claimedFixtures(1);
    const { fx, claim, version } = only!;
    const first = op(fx, claim, version, 2, undefined, 1);
    const second = op(fx, claim, version, 1, undefined, 2);
    let results: Awaited<ReturnType<typeof a.dispatch.commit>>[] = [];
    const sent = await statementsOf(async () => {
      results = await Promise.all([a.dispatch.commit(first), a.dispatch.commit(second)]);
    });
    expect(results[0]).toMatchObject({ ok: true, duplicate: false, receipt: { versionAfter: version + 2 } });
    expect(results[1]).toMatchObject({
      ok: false,
      rejection: { kind: "version_conflict", currentVersion: version + 2 },
    });
    // One call wrote the first; only the second took a transaction of its own (had the call tried
    // both, the second's event would have collided with the first's and rolled back the batch).
    expect(sent.filter((t) => t.startsWith("select o_index"))).toHaveLength(1);
    expect(sent.filter((t) => t.startsWith("start transaction"))).toHaveLength(1);
    const facts = await a.history.readThread(fx.session.threadId, version);
    expect(facts.map((f) => f.id)).toEqual(first.facts.map((f) => f.id));
  });

  it("stores each body exactly as JSON.stringify writes it, lone surrogates and NULs included, in one call", async () => {
    const claimed = await claimedFixtures(3);
    const bodies: JsonObject[] = [
      {
        content: [{ type: "text", text: 'quotes " and \\ backslashes, é, 😀, \u2028' }],
        nested: { z: 1, a: [null, true] },
      },
      { content: [{ type: "text", text: "a lone surrogate \ud800 here" }] },
      { content: [{ type: "text", text: "a NUL \u0000 here" }] },
    ];
    const operations = claimed.map(({ fx, claim, version }, i) => {
      const operation = op(fx, claim, version, 1);
      return { ...operation, facts: [{ ...operation.facts[0]!, body: bodies[i]! }] };
    });
    let results: Awaited<ReturnType<typeof a.dispatch.commit>>[] = [];
    const sent = await statementsOf(async () => {
      results = await Promise.all(operations.map((operation) => a.dispatch.commit(operation)));
    });
    expect(results.every((r) => r.ok && !r.duplicate)).toBe(true);
    expect(sent).toEqual(["select o_index, o_outcome,"]);
    for (const [i, { fx, version }] of claimed.entries()) {
      const [fact] = await a.history.readThread(fx.session.threadId, version);
      expect(fact?.body).toEqual(bodies[i]);
      const { rows } = await pgFixture!.handle.pool.query("select body_json from events where id = $1", [
        operations[i]!.facts[0]!.id,
      ]);
      expect(rows[0].body_json).toBe(JSON.stringify(bodies[i]));
    }
  });

  it("a string the server's JSON reader refuses (a lone surrogate in an id) sends the batch to the locked path, where every append lands", async () => {
    const claimed = await claimedFixtures(2);
    const operations = claimed.map(({ fx, claim, version }, i) => {
      const operation = op(fx, claim, version, 1);
      return i === 0 ? { ...operation, opId: `${operation.opId}-\ud800` } : operation;
    });
    let results: Awaited<ReturnType<typeof a.dispatch.commit>>[] = [];
    const sent = await statementsOf(async () => {
      results = await Promise.all(operations.map((operation) => a.dispatch.commit(operation)));
    });
    expect(results.every((r) => r.ok && !r.duplicate)).toBe(true);
    expect(sent.filter((t) => t.startsWith("select o_index"))).toHaveLength(1);
    expect(sent.filter((t) => t.startsWith("start transaction"))).toHaveLength(2);
    for (const { fx, version } of claimed) {
      expect(await a.history.threadVersion(fx.session.threadId)).toBe(version + 1);
    }
  });

  it("a settling append and a crash-budget reset in one batch write the run rows the locked path writes", async () => {
    const [settling, crashed] = await claimedFixtures(2);
    // The second run lapses and is claimed again: one crash to forget.
    clock.advance(LEASE_MS + 1);
    const reclaimed = (await a.dispatch.claim("w-again", LEASE_MS))!;
    // The first run's lease lapsed too; it is the one reclaimed first (oldest), so claim both anew.
    const again =
      reclaimed.runId === crashed!.fx.runId ? reclaimed : (await a.dispatch.claim("w-again2", LEASE_MS))!;
    const other =
      reclaimed.runId === crashed!.fx.runId ? (await a.dispatch.claim("w-again2", LEASE_MS))! : reclaimed;
    expect(again.crashCount).toBe(1);
    const sent = await statementsOf(async () => {
      const [r1, r2] = await Promise.all([
        a.dispatch.commit(op(settling!.fx, other, settling!.version, 1, "done")),
        a.dispatch.commit(op(crashed!.fx, again, crashed!.version, 1)),
      ]);
      expect(r1).toMatchObject({ ok: true, receipt: { settled: "done" } });
      expect(r2).toMatchObject({ ok: true });
    });
    expect(sent).toEqual(["select o_index, o_outcome,"]);
    const { rows } = await pgFixture!.handle.pool.query(
      "select id, state, owner, lease_expires_at, crash_count from runs where id = any($1) order by id",
      [[settling!.fx.runId, crashed!.fx.runId]],
    );
    const byId = new Map(rows.map((r: { id: string }) => [r.id, r]));
    expect(byId.get(settling!.fx.runId)).toMatchObject({
      state: "done",
      owner: null,
      lease_expires_at: null,
    });
    expect(byId.get(crashed!.fx.runId)).toMatchObject({
      state: "claimed",
      owner: again.owner,
      crash_count: 0,
    });
  });
});
