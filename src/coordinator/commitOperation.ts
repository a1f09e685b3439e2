import { canonicalJson, sha256Hex } from "../kernel/canonicalJson.js";
import type { Fact } from "./facts.js";

export type RunOutcome = "done" | "awaiting" | "failed";

/**
 * The only way a worker changes history: facts appended at an expected thread version under the
 * claim epoch it holds. `settle`, when present, ends the claim in the same transaction.
 */
export interface CommitOperation {
  opId: string;
  runId: string;
  threadId: string;
  owner: string;
  epoch: number;
  expectedVersion: number;
  facts: Fact[];
  settle?: RunOutcome;
}

export interface CommitReceipt {
  opId: string;
  runId: string;
  threadId: string;
  /** Thread version after the commit; the facts occupy (versionAfter - facts.length, versionAfter]. */
  versionAfter: number;
  eventIds: string[];
  committedAt: number;
  settled: RunOutcome | null;
}

export type CommitRejection =
  | { kind: "stale_claim"; reason: string }
  | { kind: "version_conflict"; currentVersion: number }
  | { kind: "operation_conflict"; reason: string };

export type CommitResult =
  | { ok: true; receipt: CommitReceipt; duplicate: boolean }
  | { ok: false; rejection: CommitRejection };

/** Hash over everything that makes two operations "the same": a retry must match it exactly. */
export function payloadHash(op: CommitOperation): string {
  return sha256Hex(
    canonicalJson({
      runId: op.runId,
      threadId: op.threadId,
      expectedVersion: op.expectedVersion,
      facts: op.facts,
      settle: op.settle ?? null,
    }),
  );
}

/** The receipt of an appended operation: the same on every backend, stored for duplicate retries. */
export function appendReceipt(op: CommitOperation, eventIds: string[], committedAt: number): CommitReceipt {
  return {
    opId: op.opId,
    runId: op.runId,
    threadId: op.threadId,
    versionAfter: op.expectedVersion + op.facts.length,
    eventIds,
    committedAt,
    settled: op.settle ?? null,
  };
}
