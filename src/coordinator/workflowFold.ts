import type { TypedFact, WorkflowPhase, WorkflowRunResult } from "./factVocabulary.js";
import { workflowCallIdOf } from "./workflowIds.js";

/** Where one workflow run stands on the history of the thread that started it. */
export interface WorkflowRunState {
  run: string;
  /** The tool call that started it. */
  callId: string;
  phases: WorkflowPhase[];
  /** Phases started so far (the next one to start is `phases[started]`). */
  started: number;
  /** The phase open now, with the id of the fact that opened it. */
  open: { phase: string; startedId: string } | null;
  ended: boolean;
}

/** The workflow runs a thread's history started, in start order, folded from their facts. */
export function foldWorkflowRuns(facts: readonly TypedFact[]): Map<string, WorkflowRunState> {
  const runs = new Map<string, WorkflowRunState>();
  for (const fact of facts) {
    if (fact.kind !== "workflow_run" || fact.run === null) continue;
    const { change } = fact;
    if (change.type === "created") {
      runs.set(fact.run, {
        run: fact.run,
        callId: workflowCallIdOf(fact.run),
        phases: change.phases,
        started: 0,
        open: null,
        ended: false,
      });
      continue;
    }
    const state = runs.get(fact.run);
    if (!state) continue;
    if (change.type === "phase_started") {
      state.started += 1;
      state.open = { phase: change.phase, startedId: fact.id };
    } else if (change.type === "phase_ended") {
      state.open = null;
    } else if (change.type === "status_ended") {
      state.ended = true;
    }
  }
  return runs;
}

/** A run's ending: its open phase closed first (every started phase is ended), then its status. */
export function workflowEnding(
  state: WorkflowRunState,
  result: WorkflowRunResult,
  newId: () => string,
): TypedFact[] {
  const facts: TypedFact[] = [];
  if (state.open) {
    facts.push({
      id: newId(),
      kind: "workflow_run",
      run: state.run,
      change: { type: "phase_ended", phase: state.open.phase, startedId: state.open.startedId },
    });
  }
  facts.push({ id: newId(), kind: "workflow_run", run: state.run, change: { type: "status_ended", result } });
  return facts;
}
