import type { CommittedTypedFact, OutcomeRubric, OutcomeVerdict } from "./factVocabulary.js";

/**
 * Outcomes as their committed facts tell them: which the client defined, where each stands and
 * what its grader said last. The session's `outcome_evaluations`, the input rules (an interrupt
 * closes an open evaluation) and the runtime (is an attempt due for grading?) all read this fold,
 * so none of them keeps outcome state of its own.
 */

/** SDK `user.define_outcome`: "Default 3". */
export const DEFAULT_MAX_ITERATIONS = 3;

export type OutcomeResult = "running" | "evaluating" | OutcomeVerdict;

export interface OutcomeState {
  outcomeId: string;
  description: string;
  rubric: OutcomeRubric;
  /** Evaluations the outcome may have before an unmet verdict ends it (the default applied). */
  maxIterations: number;
  /** Thread version of the definition. */
  definedSeq: number;
  /** The 0-based revision cycle the outcome is on: evaluations that ended so far, or the open one. */
  iteration: number;
  /** `needs_revision` while the agent revises; terminal verdicts end it. */
  result: OutcomeResult;
  explanation: string | null;
  completedAt: number | null;
  /** The evaluation started and not ended, if any (a crash left it, or it is under way). */
  openStart: { id: string; iteration: number } | null;
  /** Thread version of the last evaluation's end (or of the definition): the attempt since then. */
  attemptSince: number;
}

const TERMINAL: ReadonlySet<OutcomeResult> = new Set<OutcomeResult>([
  "satisfied",
  "max_iterations_reached",
  "failed",
  "interrupted",
]);

export function isTerminal(result: OutcomeResult): boolean {
  return TERMINAL.has(result);
}

/** The outcome still being worked on or graded, if any (at most one is: see the input rules). */
export function activeOutcome(outcomes: readonly OutcomeState[]): OutcomeState | null {
  const last = outcomes.at(-1);
  return last && !isTerminal(last.result) ? last : null;
}

/**
 * Folds committed facts (in thread order) into the session's outcomes, oldest first. Only outcome
 * facts and interrupts matter: an interrupt ends the outcome in progress (an open evaluation's end
 * says `interrupted` too, committed with the interrupt).
 */
export function foldOutcomes(facts: Iterable<CommittedTypedFact>): OutcomeState[] {
  const outcomes: OutcomeState[] = [];
  const byId = new Map<string, OutcomeState>();
  for (const fact of facts) {
    switch (fact.kind) {
      case "outcome_defined": {
        const state: OutcomeState = {
          outcomeId: fact.outcomeId,
          description: fact.description,
          rubric: fact.rubric,
          maxIterations: fact.maxIterations ?? DEFAULT_MAX_ITERATIONS,
          definedSeq: fact.seq,
          iteration: 0,
          result: "running",
          explanation: null,
          completedAt: null,
          openStart: null,
          attemptSince: fact.seq,
        };
        outcomes.push(state);
        byId.set(state.outcomeId, state);
        break;
      }
      case "outcome_evaluation_start": {
        const state = byId.get(fact.outcomeId);
        if (!state || isTerminal(state.result)) break;
        state.openStart = { id: fact.id, iteration: fact.iteration };
        state.iteration = fact.iteration;
        state.result = "evaluating";
        break;
      }
      case "outcome_evaluation_end": {
        const state = byId.get(fact.outcomeId);
        if (!state) break;
        // The end an interrupt gives an open evaluation follows the interrupt: it only says why.
        if (state.result === "interrupted" && fact.result === "interrupted") {
          state.explanation = fact.explanation;
          break;
        }
        if (isTerminal(state.result)) break;
        state.openStart = null;
        // Feedback to revise opens the next cycle; a final verdict stays on its own.
        state.iteration = fact.result === "needs_revision" ? fact.iteration + 1 : fact.iteration;
        state.result = fact.result;
        state.explanation = fact.explanation;
        state.attemptSince = fact.seq;
        if (isTerminal(fact.result)) state.completedAt = fact.createdAt;
        break;
      }
      case "interrupt": {
        const state = outcomes.at(-1);
        if (!state || isTerminal(state.result)) break;
        state.openStart = null;
        state.result = "interrupted";
        state.explanation = "The user interrupted the session before the outcome was reached.";
        state.completedAt = fact.createdAt;
        break;
      }
    }
  }
  return outcomes;
}
