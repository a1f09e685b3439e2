/**
 * Each outcome a session was given and the grader's verdict on every attempt, folded from the
 * committed `user.define_outcome` and `span.outcome_evaluation_*` events, pure. The session's own
 * `outcome_evaluations` say where each outcome stands now; this says how it got there.
 */
import type { SessionEvent } from "../api/wire.js";

export type Verdict = "satisfied" | "needs_revision" | "max_iterations_reached" | "failed" | "interrupted";

export interface Evaluation {
  iteration: number;
  startedAt: string;
  /** Null while the grader works; otherwise the verdict as the wire words it. */
  result: string | null;
  explanation: string | null;
  /** Heartbeats seen while the grader worked. */
  heartbeats: number;
}

export interface OutcomeHistory {
  outcomeId: string;
  description: string | null;
  maxIterations: number | null;
  evaluations: Evaluation[];
}

export function outcomeHistory(events: readonly SessionEvent[]): OutcomeHistory[] {
  const outcomes = new Map<string, OutcomeHistory>();
  const outcomeOf = (id: string) => {
    let outcome = outcomes.get(id);
    if (!outcome) {
      outcome = { outcomeId: id, description: null, maxIterations: null, evaluations: [] };
      outcomes.set(id, outcome);
    }
    return outcome;
  };
  const starts = new Map<string, Evaluation>();
  for (const event of events) {
    if (event.type === "user.define_outcome") {
      const outcome = outcomeOf(event.outcome_id);
      outcome.description = event.description;
      outcome.maxIterations = event.max_iterations;
    } else if (event.type === "span.outcome_evaluation_start") {
      const evaluation: Evaluation = {
        iteration: event.iteration,
        startedAt: event.processed_at,
        result: null,
        explanation: null,
        heartbeats: 0,
      };
      starts.set(event.id, evaluation);
      outcomeOf(event.outcome_id).evaluations.push(evaluation);
    } else if (event.type === "span.outcome_evaluation_ongoing") {
      const open = outcomeOf(event.outcome_id).evaluations.findLast(
        (e) => e.iteration === event.iteration && e.result === null,
      );
      if (open) open.heartbeats += 1;
    } else if (event.type === "span.outcome_evaluation_end") {
      let evaluation = starts.get(event.outcome_evaluation_start_id);
      if (!evaluation) {
        // An interrupt may close an outcome that no start in this history opened.
        evaluation = {
          iteration: event.iteration,
          startedAt: event.processed_at,
          result: null,
          explanation: null,
          heartbeats: 0,
        };
        outcomeOf(event.outcome_id).evaluations.push(evaluation);
      }
      evaluation.result = event.result;
      evaluation.explanation = event.explanation;
    }
  }
  return [...outcomes.values()];
}

const VERDICT_WORDS: Record<string, string> = {
  satisfied: "satisfied",
  needs_revision: "needs revision",
  max_iterations_reached: "max iterations reached",
  failed: "failed",
  interrupted: "interrupted",
  running: "agent working",
  evaluating: "grader evaluating",
  pending: "pending",
};

/** A verdict or an outcome's state in words; an unknown one as the wire sent it. */
export function verdictWords(result: string | null): string {
  return result === null ? "grader evaluating" : (VERDICT_WORDS[result] ?? result);
}

/** A verdict that ends the outcome well, badly, or not yet (for its colour). */
export function verdictTone(result: string | null): "ok" | "bad" | "pending" {
  if (result === "satisfied") return "ok";
  if (result === "failed" || result === "max_iterations_reached" || result === "interrupted") return "bad";
  return "pending";
}
