import { canonicalJson, sha256Hex } from "../kernel/canonicalJson.js";
import { decodeFact } from "./factCodec.js";
import type { Fact } from "./facts.js";
import type { FactKind } from "./factVocabulary.js";
import type { ExecutableAgentSnapshot } from "./ports.js";

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
  /**
   * Child threads this commit spawns (its facts carry their `thread_created`): each thread's row,
   * its first input and its queued run are written in the same transaction, or none is.
   */
  spawns?: ThreadSpawn[];
  /**
   * A child thread's answer to the run that spawned it: facts appended on the parent's history
   * (at its head, whatever it is) in this same commit, which resume the parent's parked run once
   * nothing else is pending there.
   */
  answer?: ThreadAnswer;
}

export interface ThreadAnswer {
  parentThreadId: string;
  facts: Fact[];
}

/** An agent the model defines itself (in a spawn, or a workflow plan's step); it is not saved. */
export interface InlineAgentParams {
  name: string;
  system: string | null;
  description: string | null;
}

/** An inline agent's limits (an agent's own: a name as the SDK bounds one, a generous prompt). */
export const INLINE_NAME_MAX_CHARS = 256;
export const INLINE_SYSTEM_MAX_CHARS = 100_000;
export const INLINE_DESCRIPTION_MAX_CHARS = 2_048;

/**
 * A child thread spawned by a run's commit. Its ids are derived from the spawning tool call, so a
 * re-run of the parent after a crash names the same child (and finds it committed) instead of a
 * second one.
 */
export interface ThreadSpawn {
  threadId: string;
  runId: string;
  /** The roster name it was spawned under, and the pinned agent it runs (from the session's roster). */
  agentName: string;
  agent: ExecutableAgentSnapshot;
  /** Set when the agent is inline: what the model defined (a remote worker's spawn is rebuilt from it). */
  inline?: InlineAgentParams;
  /** The child's first input, committed as its history's first facts. */
  facts: Fact[];
}

/**
 * A child thread's ids, derived from the tool call that spawned it: a re-run of the parent after a
 * crash names the same child, and an input that stops a child finds the call its parent waits on.
 */
export const childThreadIdOf = (callId: string): string => `sthr_${callId}`;
export const childRunIdOf = (callId: string): string => `run_${callId}`;
/** The spawning call of a child thread (the inverse of `childThreadIdOf`). */
export const spawnCallIdOf = (threadId: string): string => threadId.slice("sthr_".length);

export interface CommitReceipt {
  opId: string;
  runId: string;
  threadId: string;
  /** Thread version after the commit; the facts occupy (versionAfter - facts.length, versionAfter]. */
  versionAfter: number;
  eventIds: string[];
  committedAt: number;
  settled: RunOutcome | null;
  /** With a thread's answer: the parent thread's version after the answer's facts. */
  answeredVersion?: number;
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
      // Only when present, so the hash of an operation without spawns is what it always was.
      ...(op.spawns && op.spawns.length > 0 ? { spawns: op.spawns } : {}),
      ...(op.answer ? { answer: op.answer } : {}),
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
