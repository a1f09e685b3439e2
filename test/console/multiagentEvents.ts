/** Wire events of threads, workflow runs and outcomes, built for the Console's projection tests. */
import type { SessionEvent, SessionThread } from "../../src/console/api/wire.js";

let serial = 0;
const at = () => new Date(Date.UTC(2026, 0, 2, 0, 0, ++serial)).toISOString();
const id = () => `sevt_m${++serial}`;

export const wf = {
  created: (runId: string, name: string, phases: { id: string; name: string }[]): SessionEvent => ({
    id: id(),
    type: "workflow_run.created",
    workflow_run_id: runId,
    name,
    description: `${name} described`,
    phases: phases.map((p) => ({ ...p, description: null })),
    processed_at: at(),
  }),
  running: (runId: string): SessionEvent => ({
    id: id(),
    type: "workflow_run.status_running",
    workflow_run_id: runId,
    processed_at: at(),
  }),
  idle: (runId: string): SessionEvent => ({
    id: id(),
    type: "workflow_run.status_idle",
    workflow_run_id: runId,
    processed_at: at(),
  }),
  ended: (
    runId: string,
    result: Extract<SessionEvent, { type: "workflow_run.status_ended" }>["result"],
  ): SessionEvent => ({
    id: id(),
    type: "workflow_run.status_ended",
    workflow_run_id: runId,
    result,
    processed_at: at(),
  }),
  error: (runId: string | null, message: string): SessionEvent => ({
    id: id(),
    type: "workflow_run.error",
    workflow_run_id: runId,
    error: { type: "program_error", message },
    processed_at: at(),
  }),
  phaseStarted: (runId: string, phaseId: string): SessionEvent => ({
    id: id(),
    type: "workflow_run.phase_started",
    workflow_run_id: runId,
    workflow_run_phase_id: phaseId,
    processed_at: at(),
  }),
  phaseEnded: (runId: string, phaseId: string, startedId: string): SessionEvent => ({
    id: id(),
    type: "workflow_run.phase_ended",
    workflow_run_id: runId,
    workflow_run_phase_id: phaseId,
    phase_started_id: startedId,
    processed_at: at(),
  }),
};

export const th = {
  created: (threadId: string, agentName: string, workflowRunId: string | null = null): SessionEvent => ({
    id: id(),
    type: "session.thread_created",
    session_thread_id: threadId,
    agent_name: agentName,
    workflow_run_id: workflowRunId,
    processed_at: at(),
  }),
  running: (threadId: string, agentName: string): SessionEvent => ({
    id: id(),
    type: "session.thread_status_running",
    session_thread_id: threadId,
    agent_name: agentName,
    processed_at: at(),
  }),
  idle: (threadId: string, agentName: string): SessionEvent => ({
    id: id(),
    type: "session.thread_status_idle",
    session_thread_id: threadId,
    agent_name: agentName,
    stop_reason: { type: "end_turn" },
    stop_details: null,
    processed_at: at(),
  }),
  /** A thread as `threads.list` returns it. */
  listed: (
    threadId: string,
    name: string,
    parent: string | null,
    status: SessionThread["status"],
    workflowRunId: string | null = null,
  ): SessionThread =>
    ({
      id: threadId,
      type: "session_thread",
      session_id: "sesn_1",
      parent_thread_id: parent,
      workflow_run_id: workflowRunId,
      status,
      agent: { name, type: "agent" },
      stats: null,
      usage: null,
      created_at: at(),
      updated_at: at(),
      archived_at: null,
    }) as unknown as SessionThread,
};

export const oc = {
  define: (outcomeId: string, description: string, maxIterations: number | null = 3): SessionEvent => ({
    id: id(),
    type: "user.define_outcome",
    outcome_id: outcomeId,
    description,
    max_iterations: maxIterations,
    rubric: { type: "text", content: "be right" },
    processed_at: at(),
  }),
  start: (outcomeId: string, iteration: number): SessionEvent => ({
    id: id(),
    type: "span.outcome_evaluation_start",
    outcome_id: outcomeId,
    iteration,
    processed_at: at(),
  }),
  ongoing: (outcomeId: string, iteration: number): SessionEvent => ({
    id: id(),
    type: "span.outcome_evaluation_ongoing",
    outcome_id: outcomeId,
    iteration,
    processed_at: at(),
  }),
  end: (
    outcomeId: string,
    startId: string,
    iteration: number,
    result: string,
    explanation: string,
  ): SessionEvent => ({
    id: id(),
    type: "span.outcome_evaluation_end",
    outcome_id: outcomeId,
    outcome_evaluation_start_id: startId,
    iteration,
    result,
    explanation,
    usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    processed_at: at(),
  }),
};
