import type { CommitOperation, CommitReceipt, CommitRejection } from "./commitOperation.js";

/** What the store read, inside its transaction, before deciding. */
export interface FenceState {
  /** A receipt already stored under this operation id, with its payload hash. */
  existing: { payloadHash: string; receipt: CommitReceipt } | null;
  run: {
    state: string;
    owner: string | null;
    epoch: number;
    leaseExpiresAt: number | null;
    /** The thread the run belongs to: a claim on one run never writes another's history. */
    threadId: string;
  } | null;
  threadVersion: number;
  now: number;
}

export type FenceDecision =
  | { kind: "append" }
  | { kind: "duplicate"; receipt: CommitReceipt }
  | { kind: "reject"; rejection: CommitRejection };

/**
 * The commit fence as a pure decision, shared by every store backend. Order matters: a retried
 * operation that already committed returns its original receipt even if the claim has since
 * expired, because the facts are already history; everything new must hold the current claim and
 * the expected version.
 */
export function decideCommit(op: CommitOperation, opHash: string, state: FenceState): FenceDecision {
  const run = state.run;
  if (state.existing) {
    if (state.existing.payloadHash === opHash) return { kind: "duplicate", receipt: state.existing.receipt };
    // Operation ids are per run and version, so a stale owner usually collides with the id its
    // successor used: report the cause (a lost claim), not the symptom.
    if (run && run.epoch !== op.epoch) {
      return {
        kind: "reject",
        rejection: {
          kind: "stale_claim",
          reason: `claim epoch ${run.epoch} is current, operation holds ${op.epoch}`,
        },
      };
    }
    return {
      kind: "reject",
      rejection: {
        kind: "operation_conflict",
        reason: `operation ${op.opId} was committed with another payload`,
      },
    };
  }
  if (!run) return { kind: "reject", rejection: { kind: "stale_claim", reason: "run not found" } };
  if (run.state !== "claimed") {
    return { kind: "reject", rejection: { kind: "stale_claim", reason: `run is ${run.state}, not claimed` } };
  }
  if (run.epoch !== op.epoch || run.owner !== op.owner) {
    return {
      kind: "reject",
      rejection: {
        kind: "stale_claim",
        reason: `claim epoch ${run.epoch} is current, operation holds ${op.epoch}`,
      },
    };
  }
  if (run.threadId !== op.threadId) {
    return {
      kind: "reject",
      rejection: { kind: "stale_claim", reason: "the run belongs to another thread" },
    };
  }
  if (run.leaseExpiresAt === null || run.leaseExpiresAt <= state.now) {
    return { kind: "reject", rejection: { kind: "stale_claim", reason: "lease expired" } };
  }
  if (state.threadVersion !== op.expectedVersion) {
    return { kind: "reject", rejection: { kind: "version_conflict", currentVersion: state.threadVersion } };
  }
  return { kind: "append" };
}
