import { instantsAfter } from "../../deployments/cronSchedule.js";
import type { DeploymentRecord, DeploymentRunRecord } from "../../deployments/ports.js";
import { isoTime } from "../../kernel/clock.js";

const iso = (ms: number | null) => (ms === null ? null : isoTime(ms));
const UPCOMING = 5;

/**
 * SDK `BetaManagedAgentsDeployment`. `upcoming_runs_at`: the next 5 cron instants (before each
 * deployment's jitter), from the instant not yet fired when active; from now when paused (what
 * the schedule would do if unpaused); none once archived.
 */
export function deploymentDto(d: DeploymentRecord, now: number) {
  const from = d.status === "active" && d.nextRunAt !== null ? Math.min(d.nextRunAt - 1, now) : now;
  return {
    type: "deployment" as const,
    id: d.id,
    name: d.name,
    description: d.description,
    agent: { type: "agent" as const, id: d.agent.id, version: d.agent.version },
    environment_id: d.environmentId,
    initial_events: d.initialEvents,
    resources: d.resources,
    vault_ids: d.vaultIds,
    metadata: d.metadata,
    budget: d.budget,
    schedule: d.schedule
      ? {
          type: "cron" as const,
          expression: d.schedule.expression,
          timezone: d.schedule.timezone,
          last_run_at: iso(d.lastRunAt),
          upcoming_runs_at:
            d.archivedAt === null ? instantsAfter(d.schedule, from, UPCOMING).map((ms) => isoTime(ms)) : [],
        }
      : null,
    status: d.status,
    paused_reason: d.status === "paused" ? d.pausedReason : null,
    created_at: isoTime(d.createdAt),
    updated_at: isoTime(d.updatedAt),
    archived_at: iso(d.archivedAt),
  };
}

/** SDK `BetaManagedAgentsDeploymentRun`: exactly one of `session_id` and `error` is set. */
export function deploymentRunDto(run: DeploymentRunRecord) {
  return {
    type: "deployment_run" as const,
    id: run.id,
    deployment_id: run.deploymentId,
    agent: { type: "agent" as const, id: run.agent.id, version: run.agent.version },
    session_id: run.sessionId,
    error: run.error ? { type: run.error.type, message: run.error.message } : null,
    trigger_context:
      run.trigger.type === "schedule"
        ? { type: "schedule" as const, scheduled_at: isoTime(run.trigger.scheduledAt) }
        : { type: "manual" as const },
    created_at: isoTime(run.createdAt ?? run.claimedAt),
  };
}
