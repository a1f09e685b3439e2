import { canonicalJson, sha256Hex } from "../kernel/canonicalJson.js";
import { decodeFact } from "./factCodec.js";
import type { Fact } from "./facts.js";
import type { FactKind } from "./factVocabulary.js";

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

/**
 * Facts a claim commits as bookkeeping around a model call, whatever the call's fate: its status,
 * the request's spans (a request a dead owner left open is closed with one), and the errors of a
 * failed or retried request. None of them moves the conversation on.
 */
const BOOKKEEPING_FACTS: ReadonlySet<FactKind> = new Set<FactKind>([
  "status_running",
  "model_request_start",
  "model_request_end",
  "error",
  // A grader's start and heartbeats: a run whose worker dies in every evaluation makes no progress.
  "outcome_evaluation_start",
  "outcome_evaluation_ongoing",
]);

/**
 * Whether a commit is progress, which resets its run's crash budget: it holds at
 * least one fact of the conversation (a model's answer or tool call, a tool's result, …). A run
 * whose worker dies during every model call commits only bookkeeping on each claim; counted as
 * progress, that would reset the budget on every claim and the run would crash workers forever.
 */
export function makesProgress(op: CommitOperation): boolean {
  return op.facts.some((fact) => !BOOKKEEPING_FACTS.has(decodeFact(fact).kind));
}
