import { describe, expect, it } from "vitest";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import { planFactAppend } from "../../src/stores/sql/appendFacts.js";
import { planCommitWrites, receiptOfRow } from "../../src/stores/sql/commitWrites.js";
import { planInputWrites } from "../../src/stores/sql/inputWrites.js";
import {
  planClaim,
  planRunAfterCommit,
  planRunEffects,
  settledState,
} from "../../src/stores/sql/runWrites.js";

const NOW = 1_000;
const IDLE = { status: "idle", pending_json: "[]", usage_json: JSON.stringify({ input_tokens: 0 }) };
const message = { id: "sevt_1", type: "user.message", body: { content: [{ type: "text", text: "hi" }] } };
const customCall = { id: "sevt_c", type: "agent.custom_tool_use", body: { name: "lookup", input: {} } };

function op(facts: CommitOperation["facts"], settle?: CommitOperation["settle"]): CommitOperation {
  return {
    opId: "op_1",
    runId: "run_1",
    threadId: "sthr_1",
    owner: "w",
    epoch: 1,
    expectedVersion: 4,
    facts,
    ...(settle ? { settle } : {}),
  };
}

describe("the run effects of an input", () => {
  const awaiting = { id: "run_1", state: "awaiting", epoch: 3 };

  it("start inserts a queued run at epoch 0 and touches no other run", () => {
    const writes = planRunEffects(null, [{ kind: "start", runId: "run_new" }], "sesn_1", "sthr_1", NOW);
    expect(writes.update).toBeNull();
    expect(writes.inserts).toEqual([
      expect.objectContaining({
        id: "run_new",
        state: "queued",
        epoch: 0,
        crash_count: 0,
        available_at: NOW,
      }),
    ]);
  });

  it("resume queues an awaiting run, and does nothing to a run in any other state", () => {
    const trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    expect(planRunEffects(awaiting, [{ kind: "resume" }], "s", "t", NOW, trace).update).toEqual({
      id: "run_1",
      set: { state: "queued", available_at: NOW, updated_at: NOW, trace_context: trace },
      onlyIfCrashed: false,
      ifEpoch: null,
    });
    const claimed = { ...awaiting, state: "claimed" };
    expect(planRunEffects(claimed, [{ kind: "resume" }], "s", "t", NOW).update).toBeNull();
  });

  it("cancel advances the epoch and drops the claim; folded after a resume into one change", () => {
    const writes = planRunEffects(awaiting, [{ kind: "resume" }, { kind: "cancel" }], "s", "t", NOW);
    expect(writes.update?.set).toEqual({
      state: "cancelled",
      epoch: 4,
      owner: null,
      lease_expires_at: null,
      available_at: NOW,
      updated_at: NOW,
      trace_context: null,
    });
    // Resume after cancel: the run is no longer awaiting, so it stays cancelled.
    const again = planRunEffects(awaiting, [{ kind: "cancel" }, { kind: "resume" }], "s", "t", NOW);
    expect(again.update?.set.state).toBe("cancelled");
  });

  it("resume and cancel without an active run write nothing", () => {
    expect(planRunEffects(null, [{ kind: "resume" }, { kind: "cancel" }], "s", "t", NOW)).toEqual({
      inserts: [],
      update: null,
    });
  });
});

describe("the step after the fence", () => {
  it("a run parks as awaiting only while something is pending", () => {
    expect(settledState("awaiting", 0)).toBe("queued");
    expect(settledState("awaiting", 1)).toBe("awaiting");
    expect(settledState("done", 0)).toBe("done");
    expect(settledState(undefined, 3)).toBeNull();
  });

  it("a settle ends the claim and forgets the crashes", () => {
    expect(planRunAfterCommit(op([], "failed"), 0, NOW)).toEqual({
      id: "run_1",
      set: {
        state: "failed",
        owner: null,
        lease_expires_at: null,
        crash_count: 0,
        available_at: NOW,
        updated_at: NOW,
      },
      onlyIfCrashed: false,
      ifEpoch: null,
    });
  });

  it("progress resets the crash budget only where there is a crash; bookkeeping writes nothing", () => {
    expect(planRunAfterCommit(op([message]), 0, NOW)).toEqual({
      id: "run_1",
      set: { crash_count: 0, updated_at: NOW },
      onlyIfCrashed: true,
      ifEpoch: null,
    });
    const bookkeeping = op([{ id: "sevt_s", type: "session.status_running", body: {} }]);
    expect(planRunAfterCommit(bookkeeping, 0, NOW)).toBeNull();
    expect(planRunAfterCommit(op([]), 0, NOW)).toBeNull();
  });

  it("a commit reads the pending actions after its own facts", () => {
    const parked = planCommitWrites(
      op([customCall], "awaiting"),
      "h",
      { ...IDLE, session_id: "sesn_1" },
      NOW,
    );
    expect(parked.run?.set.state).toBe("awaiting");
    expect(JSON.parse(parked.facts.after.pending_json)).toEqual([
      { eventId: "sevt_c", kind: "custom_tool_result" },
    ]);
    const nothing = planCommitWrites(op([message], "awaiting"), "h", { ...IDLE, session_id: "sesn_1" }, NOW);
    expect(nothing.run?.set.state).toBe("queued");
    // One row holds the facts, the projection after them and the operation; its receipt is the row's.
    expect(nothing.row).toMatchObject({
      thread_id: "sthr_1",
      base_version: 4,
      version: 5,
      session_id: "sesn_1",
      op_id: "op_1",
      run_id: "run_1",
      payload_hash: "h",
      settled: "awaiting",
      created_at: NOW,
      status: nothing.facts.after.status,
    });
    // Each fact as [id, type, body]; an operation id in its usual form (op_<run>_v<version>) is left implied.
    expect(JSON.parse(nothing.row!.facts_json)).toEqual([[message.id, message.type, message.body]]);
    expect(nothing.operation).toBeNull();
    expect(receiptOfRow(nothing.row!)).toEqual(nothing.receipt);
    expect(nothing.receipt).toMatchObject({ versionAfter: 5, eventIds: ["sevt_1"], settled: "awaiting" });
  });

  it("an operation id in its usual form is not stored again, and reads back the same", () => {
    const usual = { ...op([message], "done"), opId: "op_run_1_v4" };
    const writes = planCommitWrites(usual, "h", { ...IDLE, session_id: "sesn_1" }, NOW);
    expect(writes.row).toMatchObject({ op_id: null, run_id: "run_1", base_version: 4 });
    expect(receiptOfRow(writes.row!)).toEqual(writes.receipt);
    expect(writes.receipt.opId).toBe("op_run_1_v4");
  });

  it("a commit without facts writes no commit row: its operation alone, with the receipt", () => {
    const writes = planCommitWrites(op([], "done"), "h", { ...IDLE, session_id: "sesn_1" }, NOW);
    expect(writes.row).toBeNull();
    expect(writes.facts.committed).toEqual([]);
    expect(writes.operation).toMatchObject({
      op_id: "op_1",
      run_id: "run_1",
      payload_hash: "h",
      committed_at: NOW,
    });
    expect(JSON.parse(writes.operation!.receipt_json)).toEqual(writes.receipt);
  });
});

describe("the claim", () => {
  it("a queued run is claimed at the next epoch without counting a crash", () => {
    const plan = planClaim({ id: "run_1", state: "queued", epoch: 2, crash_count: 1 }, "w", 9_000, NOW);
    expect(plan).toMatchObject({ epoch: 3, crashCount: 1 });
    expect(plan.update).toEqual({
      id: "run_1",
      set: {
        state: "claimed",
        owner: "w",
        epoch: 3,
        lease_expires_at: 9_000,
        crash_count: 1,
        updated_at: NOW,
      },
      onlyIfCrashed: false,
      ifEpoch: 2,
    });
  });

  it("a lapsed claim taken over counts one crash", () => {
    expect(
      planClaim({ id: "run_1", state: "claimed", epoch: 2, crash_count: 1 }, "w", 9_000, NOW),
    ).toMatchObject({
      epoch: 3,
      crashCount: 2,
    });
  });
});

describe("an input append", () => {
  it("writes one commit row (facts at the next versions, projection, receipt), the patch, the runs", () => {
    const writes = planInputWrites(
      { sessionId: "sesn_1", threadId: "sthr_1", activeRun: null },
      IDLE,
      7,
      {
        facts: [message, { id: "sevt_2", type: "session.status_running", body: {} }],
        effects: [{ kind: "start", runId: "run_1" }],
        echoIds: ["sevt_1"],
        sessionPatch: { title: "t" },
        requestHash: "rh",
        bodyHash: "bh",
      },
      NOW,
    );
    expect(writes.facts.committed.map((f) => [f.seq, f.id])).toEqual([
      [8, "sevt_1"],
      [9, "sevt_2"],
    ]);
    expect(writes.row).toMatchObject({
      base_version: 7,
      version: 9,
      status: "running",
      request_hash: "rh",
      body_hash: "bh",
      // The echoed facts by their place in the row.
      echo_json: JSON.stringify([0]),
    });
    expect(writes.session).toEqual({ title: "t", updated_at: NOW });
    expect(writes.runs.inserts.map((r) => r.id)).toEqual(["run_1"]);
  });

  it("a patch alone updates the row without touching the projection; nothing at all writes nothing", () => {
    const ctx = { sessionId: "s", threadId: "t", activeRun: null };
    const patched = planInputWrites(
      ctx,
      IDLE,
      0,
      { facts: [], effects: [], echoIds: [], sessionPatch: { archivedAt: 5 } },
      NOW,
    );
    expect(patched.session).toEqual({ archived_at: 5, updated_at: NOW });
    const none = planInputWrites(ctx, IDLE, 0, { facts: [], effects: [], echoIds: [] }, NOW);
    expect(none).toEqual({
      facts: planFactAppend("s", "t", 0, [], NOW, IDLE),
      row: null,
      session: null,
      runs: { inserts: [], update: null },
    });
  });
});
