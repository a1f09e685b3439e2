import { type CommitOperation, makesProgress } from "../../coordinator/commitOperation.js";
import type { RunEffect } from "../../coordinator/ports.js";
import { queuedRunRow } from "./runRows.js";
import type { Database } from "./schema.js";

/**
 * The rules that change a `runs` row, each one pure plan that every backend executes (the Kysely
 * path, SQLite's synchronous path, PostgreSQL's pipelined path). The two rules PostgreSQL also
 * runs in SQL of its own (the claim statement, migration 007's append function) are checked
 * against these by test/stores/writeRulesConformance.test.ts.
 */
export type RunChange = Partial<
  Pick<
    Database["runs"],
    | "state"
    | "owner"
    | "epoch"
    | "lease_expires_at"
    | "available_at"
    | "crash_count"
    | "updated_at"
    | "trace_context"
  >
>;

/**
 * One UPDATE of one run. `onlyIfCrashed` adds `crash_count <> 0` to its WHERE (nothing to forget
 * otherwise), `ifEpoch` adds `epoch = ifEpoch` (the epoch the writer read).
 */
export interface RunUpdate {
  id: string;
  set: RunChange;
  onlyIfCrashed: boolean;
  ifEpoch: number | null;
}

/** What an input's run effects write: the runs it starts, and one change to the active run. */
export interface RunEffectWrites {
  inserts: Database["runs"][];
  update: RunUpdate | null;
}

/**
 * The run effects of an input (start / resume / cancel), applied in order and folded into at most
 * one change of the active run (a statement of CTEs may not change a row twice). The active run was
 * read, locked (PostgreSQL) or serialised (SQLite), in the same transaction, so its state is known
 * exactly: a resume applies only to a run still awaiting, as a conditional UPDATE would. A start or
 * resume stores the input's trace context (`traceContext`), which the next claim hands back.
 */
export function planRunEffects(
  activeRun: { id: string; state: string; epoch: number } | null,
  effects: readonly RunEffect[],
  sessionId: string,
  threadId: string,
  now: number,
  traceContext: string | null = null,
): RunEffectWrites {
  const inserts: Database["runs"][] = [];
  let change: RunChange | null = null;
  let state = activeRun?.state ?? null;
  for (const effect of effects) {
    if (effect.kind === "start") {
      inserts.push(queuedRunRow(effect.runId, sessionId, threadId, now, traceContext));
    } else if (effect.kind === "resume" && activeRun) {
      if (state === "awaiting") {
        // The resuming input's trace continues in the slice that claims the run next.
        change = {
          ...(change ?? {}),
          state: "queued",
          available_at: now,
          updated_at: now,
          trace_context: traceContext,
        };
        state = "queued";
      }
    } else if (effect.kind === "cancel" && activeRun) {
      // Advancing the epoch fences off whichever worker holds the claim: its next commit or settle
      // is stale and rejected.
      change = {
        ...(change ?? {}),
        state: "cancelled",
        epoch: activeRun.epoch + 1,
        owner: null,
        lease_expires_at: null,
        updated_at: now,
      };
      state = "cancelled";
    }
  }
  return {
    inserts,
    update:
      change && activeRun ? { id: activeRun.id, set: change, onlyIfCrashed: false, ifEpoch: null } : null,
  };
}

/**
 * The state a settling run is left in. A run may only park as awaiting while something is actually
 * pending (`pendingAfter`: the session's pending actions after the commit's facts); otherwise it
 * stays runnable so no input is stranded.
 */
export function settledState(settle: CommitOperation["settle"], pendingAfter: number): string | null {
  if (!settle) return null;
  return settle === "awaiting" && pendingAfter === 0 ? "queued" : settle;
}

/**
 * The step after `decideCommit` accepted an append: a settle ends the claim (and forgets the
 * crashes); otherwise progress resets the crash budget, written only for a run with a crash to
 * forget; a commit that is only a claim's bookkeeping (see `makesProgress`) writes nothing.
 */
export function planRunAfterCommit(op: CommitOperation, pendingAfter: number, now: number): RunUpdate | null {
  const state = settledState(op.settle, pendingAfter);
  if (state !== null) {
    return {
      id: op.runId,
      set: {
        state,
        owner: null,
        lease_expires_at: null,
        crash_count: 0,
        available_at: now,
        updated_at: now,
      },
      onlyIfCrashed: false,
      ifEpoch: null,
    };
  }
  if (makesProgress(op)) {
    return { id: op.runId, set: { crash_count: 0, updated_at: now }, onlyIfCrashed: true, ifEpoch: null };
  }
  return null;
}

/** A claimable run as a claim reads it. */
export interface ClaimableRun {
  id: string;
  state: string;
  epoch: number;
  crash_count: number;
}

/**
 * A claim of `run`: the next epoch fences off any previous owner, and reclaiming a lapsed lease
 * (the run is still `claimed`) means that owner crashed or stalled, which counts against the
 * run's crash budget. The UPDATE is conditional on the epoch the claim read.
 */
export function planClaim(
  run: ClaimableRun,
  owner: string,
  leaseExpiresAt: number,
  now: number,
): { epoch: number; crashCount: number; update: RunUpdate } {
  const epoch = Number(run.epoch) + 1;
  const crashCount = Number(run.crash_count) + (run.state === "claimed" ? 1 : 0);
  return {
    epoch,
    crashCount,
    update: {
      id: run.id,
      set: {
        state: "claimed",
        owner,
        epoch,
        lease_expires_at: leaseExpiresAt,
        crash_count: crashCount,
        updated_at: now,
      },
      onlyIfCrashed: false,
      ifEpoch: Number(run.epoch),
    },
  };
}
