/**
 * Deployments and their runs as the Console lists them: a deployment's schedule, next instant and
 * state in words, and each run's outcome (the session it opened, or why none was). Pure: the
 * shapes are the wire's (SDK `BetaManagedAgentsDeployment`, `BetaManagedAgentsDeploymentRun`).
 */

export interface DeploymentLike {
  status: "active" | "paused";
  archived_at: string | null;
  paused_reason: { type: "manual" } | { type: "error"; error: { type: string } } | null;
  schedule: {
    expression: string;
    timezone: string;
    upcoming_runs_at?: string[];
    last_run_at?: string | null;
  } | null;
}

export interface DeploymentRunLike {
  id: string;
  session_id: string | null;
  error: { type: string; message: string } | null;
  trigger_context: { type: "manual" } | { type: "schedule"; scheduled_at: string };
  created_at: string;
}

export interface ScheduleSummary {
  /** `0 9 * * 1-5 in America/Los_Angeles`, or `manual only`. */
  label: string;
  /** The next instant the deployment would fire at (before jitter); null when none will. */
  next: string | null;
  last: string | null;
}

export function scheduleSummary(d: DeploymentLike): ScheduleSummary {
  if (!d.schedule) return { label: "manual only", next: null, last: null };
  const next =
    d.archived_at === null && d.status === "active" ? (d.schedule.upcoming_runs_at?.[0] ?? null) : null;
  return {
    label: `${d.schedule.expression} in ${d.schedule.timezone}`,
    next,
    last: d.schedule.last_run_at ?? null,
  };
}

/** `active`, `archived`, `paused`, or `paused by <error type>` when a failed fire paused it. */
export function deploymentState(d: DeploymentLike): string {
  if (d.archived_at !== null) return "archived";
  if (d.status === "active") return "active";
  return d.paused_reason?.type === "error" ? `paused by ${d.paused_reason.error.type}` : "paused";
}

export type RunOutcome =
  | { kind: "session"; sessionId: string }
  | { kind: "error"; type: string; message: string };

export interface RunRow {
  id: string;
  /** `manual`, or `schedule` with the instant it fired for. */
  trigger: string;
  scheduledAt: string | null;
  outcome: RunOutcome;
  createdAt: string;
}

export function runRow(run: DeploymentRunLike): RunRow {
  return {
    id: run.id,
    trigger: run.trigger_context.type,
    scheduledAt: run.trigger_context.type === "schedule" ? run.trigger_context.scheduled_at : null,
    outcome: run.session_id
      ? { kind: "session", sessionId: run.session_id }
      : { kind: "error", type: run.error?.type ?? "unknown_error", message: run.error?.message ?? "" },
    createdAt: run.created_at,
  };
}
