import {
  appendReceipt,
  type CommitOperation,
  type CommitReceipt,
  type RunOutcome,
} from "../../coordinator/commitOperation.js";
import {
  type CommitRow,
  type FactAppend,
  type ProjectionColumns,
  planFactAppend,
  type StoredFact,
} from "./appendFacts.js";
import { fromJson, toJson } from "./db.js";
import { queuedRunRow } from "./runRows.js";
import { planRunAfterCommit, type RunUpdate } from "./runWrites.js";
import type { Database } from "./schema.js";
import { readHash, storedHash } from "./storedHash.js";

/** What a fenced commit writes once `decideCommit` said `append`. */
export interface CommitWrites {
  facts: FactAppend;
  /** The commit's row, naming its operation; null when it appends no facts. */
  row: CommitRow | null;
  /** A commit without facts (a settle alone) records its operation here instead. */
  operation: Database["commit_operations"] | null;
  /** The step after the fence: settle the run, or reset its crash budget (see `planRunAfterCommit`). */
  run: RunUpdate | null;
  /** The child threads the commit spawns: each one's row, first commit and queued run. */
  spawns: SpawnWrites[];
  receipt: CommitReceipt;
}

export interface SpawnWrites {
  thread: Database["threads"];
  commit: CommitRow;
  run: Database["runs"];
}

/** What a child's answer writes on its parent's history: the commit row, and the parked run resumed. */
export interface AnswerWrites {
  row: CommitRow;
  /** The parent's parked run back in the queue once nothing is pending there; null otherwise. */
  resume: RunUpdate | null;
}

/**
 * A child's answer appended at its parent's head (`parent`, read in the same transaction), and the
 * parent's parked run (`awaitingRun`) resumed when the answer leaves nothing pending there.
 */
export function planAnswerWrites(
  answer: NonNullable<CommitOperation["answer"]>,
  parent: ProjectionColumns & { version: number },
  awaitingRun: { id: string; epoch: number } | null,
  sessionId: string,
  now: number,
): AnswerWrites {
  const append = planFactAppend(sessionId, answer.parentThreadId, parent.version, answer.facts, now, parent);
  if (!append.row) throw new Error("a thread's answer carries no facts");
  const pendingAfter = fromJson<unknown[]>(append.after.pending_json).length;
  return {
    row: append.row,
    resume:
      awaitingRun && pendingAfter === 0
        ? {
            id: awaitingRun.id,
            set: { state: "queued", available_at: now, updated_at: now },
            onlyIfCrashed: false,
            ifEpoch: awaitingRun.epoch,
          }
        : null,
  };
}

/** A child thread's projection before its first commit: idle, nothing pending, nothing used. */
const CHILD_START: ProjectionColumns = { status: "idle", pending_json: "[]", usage_json: "{}" };

/** A spawned child's writes: it starts at version 0 with its first input, and a run to answer it. */
function planSpawn(
  spawn: NonNullable<CommitOperation["spawns"]>[number],
  parentThreadId: string,
  sessionId: string,
  now: number,
): SpawnWrites {
  const first = planFactAppend(sessionId, spawn.threadId, 0, spawn.facts, now, CHILD_START);
  if (!first.row) throw new Error(`spawned thread ${spawn.threadId} has no first input`);
  return {
    thread: {
      id: spawn.threadId,
      session_id: sessionId,
      created_at: now,
      parent_thread_id: parentThreadId,
      agent_name: spawn.agentName,
      agent_snapshot_json: toJson(spawn.agent),
      archived_at: null,
    },
    commit: first.row,
    run: queuedRunRow(spawn.runId, sessionId, spawn.threadId, now),
  };
}

/**
 * What appending `op` on top of the projection `seen` (the thread's at `op.expectedVersion`)
 * writes: one commit row holding the facts, the projection after them and the operation, the
 * run's step after the fence (which reads the pending actions after the facts) and the receipt.
 * Pure, so SQLite's executor and PostgreSQL's write the same thing.
 */
export function planCommitWrites(
  op: CommitOperation,
  hash: string,
  seen: ProjectionColumns & { session_id: string },
  now: number,
): CommitWrites {
  const facts = planFactAppend(seen.session_id, op.threadId, op.expectedVersion, op.facts, now, seen);
  const pendingAfter = fromJson<unknown[]>(facts.after.pending_json).length;
  const receipt = appendReceipt(
    op,
    facts.committed.map((f) => f.id),
    now,
  );
  const row: CommitRow | null = facts.row
    ? {
        ...facts.row,
        op_id: storedOperationId(op),
        run_id: op.runId,
        payload_hash: storedHash(hash),
        settled: op.settle ?? null,
      }
    : null;
  return {
    facts,
    row,
    operation: row
      ? null
      : {
          op_id: op.opId,
          run_id: op.runId,
          payload_hash: hash,
          receipt_json: toJson(receipt),
          committed_at: now,
        },
    run: planRunAfterCommit(op, pendingAfter, now),
    // Spawns ride only on a commit that writes facts (their `thread_created` is among them).
    spawns: row ? (op.spawns ?? []).map((s) => planSpawn(s, op.threadId, seen.session_id, now)) : [],
    receipt,
  };
}

/** An operation's id in its usual form (the runtime's): a row stores it only when it differs. */
function usualOperationId(runId: string, baseVersion: number | string): string {
  return `op_${runId}_v${Number(baseVersion)}`;
}

/** What a commit row stores of `op`'s id: nothing when it is the usual one (its run and version). */
export function storedOperationId(
  op: Pick<CommitOperation, "opId" | "runId" | "expectedVersion">,
): string | null {
  return op.opId === usualOperationId(op.runId, op.expectedVersion) ? null : op.opId;
}

/** The operation id of a fenced commit's row; null for another commit (an input's). */
export function operationIdOf(row: {
  op_id: string | null;
  run_id: string | null;
  base_version: number | string;
}): string | null {
  if (row.run_id === null) return null;
  return row.op_id ?? usualOperationId(row.run_id, row.base_version);
}

/** The receipt a fenced commit's row stands for (what `appendReceipt` gave when it was written). */
export function receiptOfRow(row: {
  op_id: string | null;
  run_id: string | null;
  thread_id: string;
  base_version: number | string;
  version: number | string;
  facts_json: string;
  created_at: number | string;
  settled: string | null;
}): CommitReceipt {
  return {
    opId: operationIdOf(row) ?? "",
    runId: row.run_id ?? "",
    threadId: row.thread_id,
    versionAfter: Number(row.version),
    eventIds: fromJson<StoredFact[]>(row.facts_json).map(([id]) => id),
    committedAt: Number(row.created_at),
    settled: (row.settled as RunOutcome | null) ?? null,
  };
}

/** An operation already committed, as the fence compares a retry with it. */
export interface StoredOperation {
  payloadHash: string;
  receipt: CommitReceipt;
}

/** The stored operation of a commit row or a `commit_operations` row (whichever holds it). */
export function storedOperation(
  row: Parameters<typeof receiptOfRow>[0] & { payload_hash: string | null },
): StoredOperation;
export function storedOperation(row: { payload_hash: string; receipt_json: string }): StoredOperation;
export function storedOperation(
  row:
    | (Parameters<typeof receiptOfRow>[0] & { payload_hash: string | null })
    | { payload_hash: string; receipt_json: string },
): StoredOperation {
  if ("receipt_json" in row)
    return { payloadHash: row.payload_hash, receipt: fromJson<CommitReceipt>(row.receipt_json) };
  return { payloadHash: readHash(row.payload_hash ?? ""), receipt: receiptOfRow(row) };
}
