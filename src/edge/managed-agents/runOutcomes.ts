import { STORED_TYPE } from "../../coordinator/facts/storedTypes.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";

/**
 * How runs ended, folded from a thread's committed facts: a read model for the Console's failed
 * sessions and its overview, never stored. A run is one `status_running` → `status_idle`; an
 * interrupt idles with `end_turn`, so it is told by the `user.interrupt` committed inside the run.
 */
export type RunOutcome = "completed" | "failed" | "interrupted" | "waiting" | "other";

export interface RunEnd {
  /** When the run started (null: its start is before the facts read). */
  startedAt: number | null;
  endedAt: number;
  outcome: RunOutcome;
  /** The idle's wire stop reason (`end_turn`, `retries_exhausted`, `requires_action`, …). */
  stopReason: string;
  /** The last `session.error` committed in the run, if any. */
  error: { type: string; message: string } | null;
}

/** The stored types the fold reads: ask the history for these only. */
export const RUN_END_TYPES: readonly string[] = [
  STORED_TYPE.status_running,
  STORED_TYPE.status_idle,
  STORED_TYPE.error,
  STORED_TYPE.interrupt,
];

export function runEnds(facts: readonly CommittedTypedFact[]): RunEnd[] {
  const ends: RunEnd[] = [];
  let startedAt: number | null = null;
  let interrupted = false;
  let error: RunEnd["error"] = null;
  for (const fact of facts) {
    switch (fact.kind) {
      case "status_running":
        startedAt = fact.createdAt;
        interrupted = false;
        error = null;
        break;
      case "interrupt":
        interrupted = true;
        break;
      case "error":
        error = { type: fact.errorType, message: fact.message };
        break;
      case "status_idle": {
        const stopReason = fact.reason.kind === "other" ? fact.reason.type : wireStop(fact.reason.kind);
        ends.push({
          startedAt,
          endedAt: fact.createdAt,
          outcome: outcomeOf(stopReason, interrupted),
          stopReason,
          error,
        });
        startedAt = null;
        interrupted = false;
        error = null;
        break;
      }
    }
  }
  return ends;
}

function wireStop(kind: string): string {
  if (kind === "turn_ended") return "end_turn";
  if (kind === "waiting") return "requires_action";
  return kind;
}

function outcomeOf(stopReason: string, interrupted: boolean): RunOutcome {
  if (interrupted) return "interrupted";
  if (stopReason === "end_turn") return "completed";
  if (stopReason === "retries_exhausted") return "failed";
  if (stopReason === "requires_action") return "waiting";
  return "other";
}
