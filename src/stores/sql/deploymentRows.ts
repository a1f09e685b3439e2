import type {
  DeploymentRecord,
  DeploymentRunRecord,
  DeploymentStatus,
  PausedReason,
  RunErrorType,
} from "../../deployments/ports.js";
import { fromJson, toJson } from "./db.js";
import type { DeploymentTables } from "./tables/deploymentTables.js";

type DeploymentRow = DeploymentTables["deployments"];
type RunRow = DeploymentTables["deployment_runs"];

export function deploymentRow(d: DeploymentRecord): DeploymentRow {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    name: d.name,
    description: d.description,
    agent_id: d.agent.id,
    agent_version: d.agent.version,
    environment_id: d.environmentId,
    initial_events_json: toJson(d.initialEvents),
    resources_json: toJson(d.resources),
    vault_ids_json: toJson(d.vaultIds),
    metadata_json: toJson(d.metadata),
    budget_json: d.budget === null ? null : toJson(d.budget),
    schedule_expression: d.schedule?.expression ?? null,
    schedule_timezone: d.schedule?.timezone ?? null,
    status: d.status,
    paused_reason_json: d.pausedReason === null ? null : toJson(d.pausedReason),
    next_run_at: d.nextRunAt,
    last_run_at: d.lastRunAt,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    archived_at: d.archivedAt,
  };
}

export function toDeployment(r: DeploymentRow): DeploymentRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    description: r.description,
    agent: { id: r.agent_id, version: Number(r.agent_version) },
    environmentId: r.environment_id,
    initialEvents: fromJson(r.initial_events_json),
    resources: fromJson(r.resources_json),
    vaultIds: fromJson(r.vault_ids_json),
    metadata: fromJson(r.metadata_json),
    budget: r.budget_json === null ? null : fromJson(r.budget_json),
    schedule:
      r.schedule_expression !== null && r.schedule_timezone !== null
        ? { expression: r.schedule_expression, timezone: r.schedule_timezone }
        : null,
    status: r.status as DeploymentStatus,
    pausedReason: r.paused_reason_json === null ? null : fromJson<PausedReason>(r.paused_reason_json),
    nextRunAt: r.next_run_at === null ? null : Number(r.next_run_at),
    lastRunAt: r.last_run_at === null ? null : Number(r.last_run_at),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    archivedAt: r.archived_at === null ? null : Number(r.archived_at),
  };
}

export function runRow(run: DeploymentRunRecord): RunRow {
  return {
    id: run.id,
    workspace_id: run.workspaceId,
    deployment_id: run.deploymentId,
    agent_id: run.agent.id,
    agent_version: run.agent.version,
    trigger_type: run.trigger.type,
    scheduled_at: run.trigger.type === "schedule" ? run.trigger.scheduledAt : null,
    session_id: run.sessionId,
    error_type: run.error?.type ?? null,
    error_message: run.error?.message ?? null,
    claimed_at: run.claimedAt,
    created_at: run.createdAt,
  };
}

export function toRun(r: RunRow): DeploymentRunRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    deploymentId: r.deployment_id,
    agent: { id: r.agent_id, version: Number(r.agent_version) },
    trigger:
      r.trigger_type === "schedule" && r.scheduled_at !== null
        ? { type: "schedule", scheduledAt: Number(r.scheduled_at) }
        : { type: "manual" },
    sessionId: r.session_id,
    error:
      r.error_type === null ? null : { type: r.error_type as RunErrorType, message: r.error_message ?? "" },
    claimedAt: Number(r.claimed_at),
    createdAt: r.created_at === null ? null : Number(r.created_at),
  };
}
