import {
  appendReceipt,
  type CommitOperation,
  type CommitReceipt,
} from "../../coordinator/commitOperation.js";
import type { PendingAction } from "../../coordinator/facts.js";
import { type FactAppend, type ProjectionColumns, planFactAppend } from "./appendFacts.js";
import { fromJson, toJson } from "./db.js";
import { planRunAfterCommit, type RunUpdate } from "./runWrites.js";
import type { Database } from "./schema.js";

/** What a fenced commit writes once `decideCommit` said `append`. */
export interface CommitWrites {
  facts: FactAppend;
  /** The session row's projection columns; null without facts (the projection did not move). */
  session: (ProjectionColumns & { updated_at: number }) | null;
  /** The step after the fence: settle the run, or reset its crash budget (see `planRunAfterCommit`). */
  run: RunUpdate | null;
  operation: Database["commit_operations"];
  receipt: CommitReceipt;
}

/**
 * What appending `op` on top of the session projection `seen` writes: the facts at their versions,
 * the projection after them, the run's step after the fence (which reads the pending actions
 * after the facts) and the receipt stored under the operation id. Pure, so every commit path
 * (Kysely, SQLite's synchronous one, PostgreSQL's locked one and the arguments of its one-call
 * function) writes the same thing.
 */
export function planCommitWrites(
  op: CommitOperation,
  hash: string,
  seen: ProjectionColumns & { session_id: string },
  now: number,
): CommitWrites {
  const facts = planFactAppend(seen.session_id, op.threadId, op.expectedVersion, op.facts, now, seen);
  const pendingAfter = fromJson<PendingAction[]>(facts.after.pending_json).length;
  const receipt = appendReceipt(
    op,
    facts.committed.map((f) => f.id),
    now,
  );
  return {
    facts,
    session: facts.version ? { ...facts.after, updated_at: now } : null,
    run: planRunAfterCommit(op, pendingAfter, now),
    operation: {
      op_id: op.opId,
      run_id: op.runId,
      payload_hash: hash,
      receipt_json: toJson(receipt),
      committed_at: now,
    },
    receipt,
  };
}

/**
 * Whether `planCommitWrites` reads the projection it is given: facts fold into it, and a run
 * parking as awaiting reads its pending actions. Otherwise a store need not read the row at all.
 */
export function commitReadsProjection(op: CommitOperation): boolean {
  return op.facts.length > 0 || op.settle === "awaiting";
}

/** Stands in for the projection when `commitReadsProjection` is false: nothing is written from it. */
export const UNREAD_PROJECTION: ProjectionColumns = { status: "", pending_json: "[]", usage_json: "{}" };
