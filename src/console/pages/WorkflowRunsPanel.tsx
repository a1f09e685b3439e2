import {
  describeResult,
  phaseState,
  type WorkflowPhase,
  type WorkflowRun,
  type WorkflowRuns,
} from "../projection/workflowRuns.js";
import { formatTime } from "./formatTime.js";

/** The session's workflow runs as its history records them: phases in order, each start and end. */
export function WorkflowRunsPanel({ workflows }: { workflows: WorkflowRuns }) {
  if (workflows.runs.length === 0 && workflows.unattributed.length === 0) return null;
  return (
    <section className="card" aria-labelledby="workflows-title" data-testid="workflow-runs">
      <h2 id="workflows-title">Workflow runs</h2>
      <ul className="plain workflow-runs">
        {workflows.runs.map((run) => (
          <RunItem key={run.id} run={run} />
        ))}
      </ul>
      {workflows.unattributed.map((error, index) => (
        // Errors without a run have no id of their own: their order in the history names them.
        // biome-ignore lint/suspicious/noArrayIndexKey: the list only grows at its end
        <p key={index} className="problem">
          {error.type}: {error.message}
        </p>
      ))}
    </section>
  );
}

function RunItem({ run }: { run: WorkflowRun }) {
  const result = describeResult(run.result);
  return (
    <li data-testid="workflow-run" data-workflow-run-id={run.id} data-status={run.status}>
      <div className="thread-line">
        <strong>{run.name}</strong>
        <span className={`status workflow-${run.status}`}>{run.status}</span>
        <span className="mono muted thread-id">{run.id}</span>
      </div>
      {run.description && <p className="muted">{run.description}</p>}
      {run.phases.length > 0 && (
        <ol className="phases">
          {run.phases.map((phase) => (
            <PhaseItem key={phase.id} phase={phase} />
          ))}
        </ol>
      )}
      {result && (
        <p data-testid="workflow-result" className={run.result?.type === "error" ? "problem" : undefined}>
          Result: {result}
        </p>
      )}
      {run.errors.map((error, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a run's errors only grow at the end
        <p key={index} className="problem">
          {error.type}: {error.message}
        </p>
      ))}
      {run.threadIds.length > 0 && (
        <p className="muted">
          {run.threadIds.length} {run.threadIds.length === 1 ? "thread" : "threads"}
        </p>
      )}
    </li>
  );
}

function PhaseItem({ phase }: { phase: WorkflowPhase }) {
  const state = phaseState(phase);
  return (
    <li data-testid="workflow-phase" data-state={state}>
      <span className={`phase-mark phase-${state}`} aria-hidden="true" />
      <span>{phase.name}</span> <span className="muted">({state})</span>
      {phase.description && <span className="muted"> — {phase.description}</span>}
      {phase.marks.map((mark) => (
        <div key={mark.startedId} className="muted phase-times">
          started {formatTime(mark.startedAt)}
          {mark.endedAt ? `, ended ${formatTime(mark.endedAt)}` : ""}
        </div>
      ))}
    </li>
  );
}
