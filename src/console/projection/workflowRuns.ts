/**
 * A session's workflow runs folded from its committed `workflow_run.*` events, pure: each run's
 * name, phases (with every start and end), status, result and errors, and the threads it made.
 */
import type { SessionEvent } from "../api/wire.js";

type EventOf<T extends SessionEvent["type"]> = Extract<SessionEvent, { type: T }>;
export type WorkflowRunResult = EventOf<"workflow_run.status_ended">["result"];
export type WorkflowRunError = EventOf<"workflow_run.error">["error"];

/** One start of a phase, and its end once committed. */
export interface PhaseMark {
  startedId: string;
  /** Null when the history holds the end without its start. */
  startedAt: string | null;
  endedAt: string | null;
}

export interface WorkflowPhase {
  id: string;
  name: string;
  description: string | null;
  marks: PhaseMark[];
}

export type WorkflowRunStatus = "created" | "running" | "idle" | "ended";

export interface WorkflowRun {
  id: string;
  name: string;
  description: string | null;
  status: WorkflowRunStatus;
  createdAt: string | null;
  phases: WorkflowPhase[];
  result: WorkflowRunResult | null;
  errors: WorkflowRunError[];
  threadIds: string[];
}

export interface WorkflowRuns {
  runs: WorkflowRun[];
  /** Errors the wire attributes to no run (`workflow_run_id: null`). */
  unattributed: WorkflowRunError[];
}

export function workflowRuns(events: readonly SessionEvent[]): WorkflowRuns {
  const runs = new Map<string, WorkflowRun>();
  const unattributed: WorkflowRunError[] = [];
  // An event of a run whose creation is not in this history still shows, under its id.
  const runOf = (id: string): WorkflowRun => {
    let run = runs.get(id);
    if (!run) {
      run = {
        id,
        name: id,
        description: null,
        status: "created",
        createdAt: null,
        phases: [],
        result: null,
        errors: [],
        threadIds: [],
      };
      runs.set(id, run);
    }
    return run;
  };
  const phaseOf = (run: WorkflowRun, id: string): WorkflowPhase => {
    let phase = run.phases.find((p) => p.id === id);
    if (!phase) {
      phase = { id, name: id, description: null, marks: [] };
      run.phases.push(phase);
    }
    return phase;
  };
  for (const event of events) {
    switch (event.type) {
      case "workflow_run.created": {
        const run = runOf(event.workflow_run_id);
        run.name = event.name;
        run.description = event.description;
        run.createdAt = event.processed_at;
        const seen = run.phases;
        run.phases = event.phases.map((p) => ({
          id: p.id,
          name: p.name,
          description: p.description,
          marks: seen.find((s) => s.id === p.id)?.marks ?? [],
        }));
        break;
      }
      case "workflow_run.status_running":
        runOf(event.workflow_run_id).status = "running";
        break;
      case "workflow_run.status_idle":
        runOf(event.workflow_run_id).status = "idle";
        break;
      case "workflow_run.status_ended": {
        const run = runOf(event.workflow_run_id);
        run.status = "ended";
        run.result = event.result;
        break;
      }
      case "workflow_run.error":
        if (event.workflow_run_id === null) unattributed.push(event.error);
        else runOf(event.workflow_run_id).errors.push(event.error);
        break;
      case "workflow_run.phase_started":
        phaseOf(runOf(event.workflow_run_id), event.workflow_run_phase_id).marks.push({
          startedId: event.id,
          startedAt: event.processed_at,
          endedAt: null,
        });
        break;
      case "workflow_run.phase_ended": {
        const phase = phaseOf(runOf(event.workflow_run_id), event.workflow_run_phase_id);
        const mark = phase.marks.find((m) => m.startedId === event.phase_started_id);
        if (mark) mark.endedAt = event.processed_at;
        else
          phase.marks.push({
            startedId: event.phase_started_id,
            startedAt: null,
            endedAt: event.processed_at,
          });
        break;
      }
      case "session.thread_created":
        if (event.workflow_run_id) runOf(event.workflow_run_id).threadIds.push(event.session_thread_id);
        break;
    }
  }
  return { runs: [...runs.values()], unattributed };
}

/** Where a phase stands: never started, started and not ended, or its last start ended. */
export function phaseState(phase: WorkflowPhase): "pending" | "running" | "ended" {
  const last = phase.marks.at(-1);
  return !last ? "pending" : last.endedAt === null ? "running" : "ended";
}

export function describeResult(result: WorkflowRunResult | null): string | null {
  if (!result) return null;
  return result.type === "error" ? `error — ${result.error.type}: ${result.error.message}` : result.type;
}
